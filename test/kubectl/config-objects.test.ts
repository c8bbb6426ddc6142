/**
 * ConfigMaps, Secrets and ServiceAccounts with the real kubectl (the dispatcher, 1.27 and 1.33)
 * against the compiled agent: create configmap and secret (generic, tls, docker-registry) as their
 * users type them, get as a table and as YAML, describe secret without its values, apply of a file
 * holding a ConfigMap and a Secret, patch and replace, the API server's refusals (a bad key, an
 * immutable ConfigMap changed, a Secret type's missing key), and delete.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, useAgentWithApi } from "./harness.ts";
import { afterAll, beforeAll } from "bun:test";

const agent = useAgentWithApi();

// A self-signed pair for `create secret tls`: kubectl checks that the two match.
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBfTCCASOgAwIBAgIUZ4sFbm7vN5Zq7r1x9bYzHh0m7xMwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAw
MDAwMFowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAE
-----END CERTIFICATE-----
`;

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(`ConfigMaps, Secrets and ServiceAccounts with ${label}`, binary, (kubectl) => {
    let session: KubectlSession;
    const suffix = label.replace(/\D/g, "") || "dispatcher";
    const ns = `objects-${suffix}`;
    const run = (...args: string[]) => session.run(kubectl, args, { timeoutMs: 60_000 });
    beforeAll(async () => {
      session = new KubectlSession(agent.ws.db, agent.ws.cli("kubeconfig"));
      expect((await run("create", "namespace", ns)).status).toBe(0);
    });
    afterAll(() => session?.[Symbol.dispose]());

    test("create configmap --from-literal and --from-file; get shows NAME DATA AGE; -o yaml the data as given", async () => {
      const file = join(session.dir, "app.properties");
      writeFileSync(file, "color=blue\nsize=3\n");
      const created = await run("-n", ns, "create", "configmap", "settings", "--from-literal=mode=fast", "--from-literal=level=3", `--from-file=${file}`);
      expect(created).toMatchObject({ status: 0, stdout: "configmap/settings created\n", stderr: "" });
      const listed = await run("-n", ns, "get", "configmaps");
      // kube-root-ca.crt is in every namespace, as the root CA publisher puts it there.
      expect(listed.stdout).toMatch(/^NAME\s+DATA\s+AGE\nkube-root-ca\.crt\s+1\s+\d+s\nsettings\s+3\s+\d+s\n$/);
      const shown = JSON.parse((await run("-n", ns, "get", "cm", "settings", "-o", "json")).stdout);
      expect(shown).toMatchObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: ns }, data: { mode: "fast", level: "3", "app.properties": "color=blue\nsize=3\n" } });
      expect(shown.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      const again = await run("-n", ns, "create", "configmap", "settings", "--from-literal=a=b");
      expect(again).toMatchObject({ status: 1, stderr: 'error: failed to create configmap: configmaps "settings" already exists\n' });
    });

    test("create secret generic, tls and docker-registry; get shows the types; describe shows sizes, never values", async () => {
      expect(await run("-n", ns, "create", "secret", "generic", "db", "--from-literal=password=s3cr3t-value", "--from-literal=user=admin")).toMatchObject({ status: 0, stdout: "secret/db created\n" });
      const cert = join(session.dir, "tls.crt");
      const key = join(session.dir, "tls.key");
      writeFileSync(cert, TLS_CERT);
      writeFileSync(key, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
      const tls = await run("-n", ns, "create", "secret", "tls", "site", `--cert=${cert}`, `--key=${key}`);
      // kubectl itself checks the pair; whatever it decides, the server's answer is what it prints.
      if (tls.status === 0) expect(tls.stdout).toBe("secret/site created\n");
      expect(await run("-n", ns, "create", "secret", "docker-registry", "pull", "--docker-server=registry.local", "--docker-username=me", "--docker-password=pw")).toMatchObject({ status: 0, stdout: "secret/pull created\n" });
      const listed = (await run("-n", ns, "get", "secrets")).stdout;
      expect(listed).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE\n/);
      expect(listed).toMatch(/\ndb\s+Opaque\s+2\s+\d+s\n/);
      expect(listed).toMatch(/\npull\s+kubernetes\.io\/dockerconfigjson\s+1\s+\d+s\n/);
      const shown = JSON.parse((await run("-n", ns, "get", "secret", "db", "-o", "json")).stdout);
      expect(Buffer.from(shown.data.password, "base64").toString()).toBe("s3cr3t-value");
      const described = await run("-n", ns, "describe", "secret", "db");
      expect(described.stdout).toMatch(/password:\s+12 bytes/);
      expect(described.stdout).not.toContain("s3cr3t-value");
    });

    test("apply -f of a ConfigMap and a Secret with stringData; apply again with a change; the Secret's stringData is stored as data", async () => {
      const manifest = (level: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: ${ns}}
data:
  LEVEL: "${level}"
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: ${ns}}
stringData:
  token: abc123
`;
      const file = join(session.dir, "app.yaml");
      writeFileSync(file, manifest("1"));
      const applied = await run("apply", "-f", file);
      expect(applied).toMatchObject({ status: 0, stdout: "configmap/app-config created\nsecret/app-secret created\n" });
      writeFileSync(file, manifest("2"));
      const again = await run("apply", "-f", file);
      // The live Secret holds no stringData (it was written into data), so kubectl's three-way patch
      // always sends it again: "configured", as a real API server answers it too.
      expect(again).toMatchObject({ status: 0, stdout: "configmap/app-config configured\nsecret/app-secret configured\n" });
      expect((await run("-n", ns, "get", "cm", "app-config", "-o", "jsonpath={.data.LEVEL}")).stdout).toBe("2");
      const secret = JSON.parse((await run("-n", ns, "get", "secret", "app-secret", "-o", "json")).stdout);
      expect(secret.stringData).toBeUndefined();
      expect(secret).toMatchObject({ type: "Opaque", data: { token: Buffer.from("abc123").toString("base64") } });
    });

    test("patch and replace change the data; an immutable ConfigMap refuses both, in the API server's words", async () => {
      expect((await run("-n", ns, "create", "configmap", "frozen", "--from-literal=a=1")).status).toBe(0);
      expect(await run("-n", ns, "patch", "configmap", "frozen", "-p", '{"data":{"b":"2"}}')).toMatchObject({ status: 0, stdout: "configmap/frozen patched\n" });
      expect(await run("-n", ns, "patch", "configmap", "frozen", "--type=merge", "-p", '{"immutable":true}')).toMatchObject({ status: 0 });
      const refused = await run("-n", ns, "patch", "configmap", "frozen", "-p", '{"data":{"a":"3"}}');
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe('The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set\n');
      expect((await run("-n", ns, "get", "cm", "frozen", "-o", "jsonpath={.data}")).stdout).toBe('{"a":"1","b":"2"}');
    });

    test("the refusals: a key no file may be named, a TLS Secret without its key, a Secret's type changed", async () => {
      const badKey = await run("-n", ns, "create", "configmap", "bad", "--from-literal=a/b=1");
      expect(badKey.status).toBe(1);
      expect(badKey.stderr).toContain("a valid config key must consist of alphanumeric characters");
      const file = join(session.dir, "tls-half.yaml");
      writeFileSync(file, `apiVersion: v1\nkind: Secret\nmetadata: {name: half, namespace: ${ns}}\ntype: kubernetes.io/tls\nstringData: {tls.crt: x}\n`);
      const half = await run("create", "-f", file);
      expect(half).toMatchObject({ status: 1, stderr: 'The Secret "half" is invalid: data[tls.key]: Required value\n' });
      expect((await run("-n", ns, "create", "secret", "generic", "typed", "--from-literal=a=1")).status).toBe(0);
      const retyped = await run("-n", ns, "patch", "secret", "typed", "--type=merge", "-p", '{"type":"kubernetes.io/basic-auth","stringData":{"username":"u"}}');
      expect(retyped.status).toBe(1);
      expect(retyped.stderr).toBe('The Secret "typed" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable\n');
    });

    test("every namespace has its default ServiceAccount, the system ones and a created one", async () => {
      expect((await run("-n", ns, "get", "sa", "-o", "name")).stdout).toBe("serviceaccount/default\n");
      expect((await run("-n", "kube-system", "get", "sa", "default", "-o", "jsonpath={.metadata.name}")).stdout).toBe("default");
      expect((await run("-n", "default", "get", "sa", "default", "-o", "jsonpath={.metadata.name}")).stdout).toBe("default");
    });

    test("serviceaccounts: create, get as NAME AGE, delete; api-resources lists all three", async () => {
      expect(await run("-n", ns, "create", "serviceaccount", "builder")).toMatchObject({ status: 0, stdout: "serviceaccount/builder created\n" });
      expect((await run("-n", ns, "get", "sa", "builder")).stdout).toMatch(/^NAME\s+AGE\nbuilder\s+\d+s\n$/);
      // Its secrets merge by name, as the type's patch strategy says.
      expect((await run("-n", ns, "patch", "sa", "builder", "-p", '{"secrets":[{"name":"a"}]}')).status).toBe(0);
      expect((await run("-n", ns, "patch", "sa", "builder", "-p", '{"secrets":[{"name":"b"}]}')).status).toBe(0);
      expect((await run("-n", ns, "get", "sa", "builder", "-o", "jsonpath={.secrets[*].name}")).stdout).toBe("b a");
      expect(await run("-n", ns, "delete", "sa", "builder")).toMatchObject({ status: 0, stdout: 'serviceaccount "builder" deleted\n' });
      expect(await run("-n", ns, "get", "sa", "builder")).toMatchObject({ status: 1, stderr: 'Error from server (NotFound): serviceaccounts "builder" not found\n' });
      const resources = (await run("api-resources")).stdout;
      expect(resources).toMatch(/\nconfigmaps\s+cm\s+v1\s+true\s+ConfigMap\n/);
      expect(resources).toMatch(/\nsecrets\s+v1\s+true\s+Secret\n/);
      expect(resources).toMatch(/\nserviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount\n/);
    });

    test("explain reads the served schemas", async () => {
      const explained = await run("explain", "configmap.immutable");
      expect(explained.status).toBe(0);
      // kubectl wraps the description at 80 columns.
      const text = (out: string) => out.replace(/\s+/g, " ");
      expect(text(explained.stdout)).toContain("FIELD: immutable <boolean> DESCRIPTION: Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated");
      expect(text((await run("explain", "secret.stringData")).stdout)).toContain("stringData allows specifying non-binary secret data in string form.");
    });

    test("delete configmap; delete ns takes its ConfigMaps and Secrets with it", async () => {
      expect((await run("-n", ns, "create", "configmap", "gone", "--from-literal=a=1")).status).toBe(0);
      expect(await run("-n", ns, "delete", "configmap", "gone")).toMatchObject({ status: 0, stdout: 'configmap "gone" deleted\n' });
      expect(await run("-n", ns, "get", "cm", "gone")).toMatchObject({ status: 1, stderr: 'Error from server (NotFound): configmaps "gone" not found\n' });
      const other = `${ns}-x`;
      expect((await run("create", "namespace", other)).status).toBe(0);
      expect((await run("-n", other, "create", "secret", "generic", "s", "--from-literal=a=1")).status).toBe(0);
      expect((await run("delete", "ns", other)).status).toBe(0);
      expect((await run("get", "secrets", "-A", "-o", "name")).stdout).not.toContain("secret/s\n");
      expect(agent.ws.query("SELECT count(*) AS n FROM api_objects WHERE namespace = ? AND deleted = 0", other)).toEqual([{ n: 0 }]);
    });
  });
}
