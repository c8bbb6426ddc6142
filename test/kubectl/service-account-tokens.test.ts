/**
 * ServiceAccount tokens of the agent's own API, with the real kubectl (1.33) and the Python client
 * in a pod, against the compiled agent on the process runtime: `kubectl create token` issues one;
 * it reads its own namespace and is refused the rest in RBAC's words; it stops working when its
 * ServiceAccount goes; and the token volume the ServiceAccount admission adds, with kube-root-ca.crt and the
 * KUBERNETES_SERVICE_* variables, lets the Python client's in-cluster loader list the pod's
 * namespace from inside the pod.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithPythonClient, PYTHON } from "../clients/client-script.ts";
import { waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession, useAgentWithApi } from "./harness.ts";

const agent = useAgentWithApi();
const NS = "tokens";

let session: KubectlSession;
const run = (...args: string[]) => session.run(KUBECTL.versions["1.33"]!, args, { timeoutMs: 60_000 });
const as = (token: string, ...args: string[]) => run("--token", token, ...args);

beforeAll(async () => {
  session = new KubectlSession(agent.ws.db, agent.ws.cli("kubeconfig"));
  expect((await run("create", "namespace", NS)).status).toBe(0);
});
afterAll(() => session?.[Symbol.dispose]());

describeWithKubectl("ServiceAccount tokens with kubectl 1.33", KUBECTL.versions["1.33"], () => {
  test("create token: a JWT for the ServiceAccount; it reads its own namespace, and is refused the rest as RBAC refuses it", async () => {
    const created = await run("-n", NS, "create", "token", "default");
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims).toMatchObject({ sub: `system:serviceaccount:${NS}:default`, "kubernetes.io": { namespace: NS, serviceaccount: { name: "default" } } });
    expect(claims.exp - claims.iat).toBe(3600);

    expect(await as(token, "-n", NS, "get", "pods")).toMatchObject({ status: 0, stderr: `No resources found in ${NS} namespace.\n` });
    expect((await as(token, "-n", NS, "get", "configmap", "kube-root-ca.crt", "-o", "jsonpath={.data.ca\\.crt}")).stdout).toStartWith("-----BEGIN CERTIFICATE-----");
    const user = `system:serviceaccount:${NS}:default`;
    expect(await as(token, "-n", "default", "get", "pods")).toMatchObject({ status: 1, stderr: `Error from server (Forbidden): pods is forbidden: User "${user}" cannot list resource "pods" in API group "" in the namespace "default"\n` });
    expect(await as(token, "-n", NS, "get", "secrets")).toMatchObject({ status: 1, stderr: `Error from server (Forbidden): secrets is forbidden: User "${user}" cannot list resource "secrets" in API group "" in the namespace "${NS}"\n` });
    expect(await as(token, "-n", NS, "delete", "configmap", "kube-root-ca.crt")).toMatchObject({ status: 1, stderr: `Error from server (Forbidden): configmaps "kube-root-ca.crt" is forbidden: User "${user}" cannot delete resource "configmaps" in API group "" in the namespace "${NS}"\n` });
    expect(await as(token, "get", "nodes")).toMatchObject({ status: 1, stderr: `Error from server (Forbidden): nodes is forbidden: User "${user}" cannot list resource "nodes" in API group "" at the cluster scope\n` });
  });

  test("a token stops working when its ServiceAccount is deleted; an unknown token is 401", async () => {
    expect((await run("-n", NS, "create", "serviceaccount", "builder")).status).toBe(0);
    const token = (await run("-n", NS, "create", "token", "builder", "--duration", "15m")).stdout.trim();
    expect((await as(token, "-n", NS, "get", "sa")).status).toBe(0);
    expect((await run("-n", NS, "delete", "sa", "builder")).status).toBe(0);
    const refused = await as(token, "-n", NS, "get", "sa");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe("error: You must be logged in to the server (Unauthorized)\n");
    expect((await run("-n", NS, "create", "token", "builder")).stderr).toBe('error: failed to create token: serviceaccounts "builder" not found\n');
    expect((await run("-n", NS, "create", "token", "default", "--duration", "5m")).stderr).toContain("may not specify a duration less than 10 minutes");
  });
});

describeWithPythonClient("the Python client in a pod, with the pod's own token", () => {
  test("the ServiceAccount admission's kube-api-access volume (token, ca.crt, namespace) and KUBERNETES_SERVICE_*: the in-cluster loader lists the pod's namespace", async () => {
    const script = [
      "import os",
      "from kubernetes import client, config",
      "from kubernetes.config.incluster_config import InClusterConfigLoader",
      // The process runtime hands the volume's path over in MINIKUBELET_VOLUME_<NAME> when it cannot bind it at its mountPath.
      "volume = next(v for k, v in os.environ.items() if k.startswith('MINIKUBELET_VOLUME_KUBE_API_ACCESS_'))",
      "InClusterConfigLoader(token_filename=volume + '/token', cert_filename=volume + '/ca.crt').load_and_set()",
      "namespace = open(volume + '/namespace').read()",
      "print('pods:', ' '.join(sorted(p.metadata.name for p in client.CoreV1Api().list_namespaced_pod(namespace).items)))",
      "try:",
      "    client.CoreV1Api().list_namespaced_pod('default')",
      "except client.exceptions.ApiException as e:",
      "    print('default:', e.status)",
    ].join("\n");
    const file = join(session.dir, "in-cluster.yaml");
    writeFileSync(
      file,
      `apiVersion: v1
kind: Pod
metadata: {name: in-cluster, namespace: ${NS}}
spec:
  restartPolicy: Never
  containers:
    - name: client
      image: python
      command: [${PYTHON}, -c, ${JSON.stringify(script)}]
`,
    );
    expect(await run("create", "-f", file)).toMatchObject({ status: 0, stderr: "" });
    const spec = JSON.parse((await run("-n", NS, "get", "pod", "in-cluster", "-o", "jsonpath={.spec}")).stdout);
    expect(spec.serviceAccountName).toBe("default");
    const volume = spec.volumes.find((v: { name: string }) => v.name.startsWith("kube-api-access-"));
    expect(spec.containers[0].volumeMounts).toEqual([{ name: volume.name, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true }]);
    await waitFor("the client's answer", async () => (await run("-n", NS, "get", "pod", "in-cluster", "-o", "jsonpath={.status.phase}")).stdout === "Succeeded", 30_000, () => agent.agent.stdout);
    expect((await run("-n", NS, "logs", "in-cluster")).stdout).toBe("pods: in-cluster\ndefault: 403\n");
    // kubectl's describe and ours print the token volume alike.
    const volumes = (text: string) => text.slice(text.indexOf("\nVolumes:"), text.indexOf("\nQoS Class:"));
    const theirs = volumes((await run("-n", NS, "describe", "pod", "in-cluster")).stdout);
    expect(theirs).toContain(`${volume.name}:\n    Type:                    Projected (a volume that contains injected data from multiple sources)\n    TokenExpirationSeconds:  3607\n    ConfigMapName:           kube-root-ca.crt\n    Optional:                false\n    DownwardAPI:             true`);
    expect(volumes(agent.ws.cli("describe", "pod", "in-cluster", "-n", NS))).toBe(theirs);
  });

  test("a pod naming a ServiceAccount that does not exist is refused in the admission's words; automount off mounts nothing", async () => {
    const file = join(session.dir, "named.yaml");
    const pod = (name: string, spec: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${NS}}
spec:
${spec}
  containers: [{name: app, image: busybox, command: [sleep, "60"]}]
`;
    writeFileSync(file, pod("named", "  serviceAccountName: missing"));
    expect(await run("create", "-f", file)).toMatchObject({
      status: 1,
      stderr: `Error from server (Forbidden): error when creating "${file}": pods "named" is forbidden: error looking up service account ${NS}/missing: serviceaccount "missing" not found\n`,
    });
    writeFileSync(file, pod("quiet", "  automountServiceAccountToken: false"));
    expect((await run("create", "-f", file)).status).toBe(0);
    expect((await run("-n", NS, "get", "pod", "quiet", "-o", "jsonpath={.spec.serviceAccountName} {.spec.volumes}")).stdout).toBe("default ");
    expect((await run("-n", NS, "delete", "pod", "quiet", "--grace-period", "0", "--force")).status).toBe(0);
  });
});
