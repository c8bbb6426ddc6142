/**
 * API pods that use ConfigMaps and Secrets, with the real kubectl (1.27 and 1.33) against the
 * compiled agent on the process runtime: one `apply -f` of a ConfigMap, a Secret and a Pod; the
 * container's env and its configMap volume hold their values; a `kubectl edit` of the ConfigMap reaches the
 * mounted file while the container runs; a pod whose Secret does not exist yet waits in
 * CreateContainerConfigError with the kubelet's message and starts once the Secret is created.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, useAgentWithApi } from "./harness.ts";

const agent = useAgentWithApi();

const LABELS = ["kubectl 1.27", "kubectl 1.33"];

for (const [label, binary] of KUBECTLS_UNDER_TEST.filter(([name]) => LABELS.includes(name))) {
  describeWithKubectl(`pods using ConfigMaps and Secrets with ${label}`, binary, (kubectl) => {
    let session: KubectlSession;
    const ns = `app-${label.replace(/\D/g, "")}`;
    const run = (...args: string[]) => session.run(kubectl, args, { timeoutMs: 60_000 });
    const logs = async (pod: string) => (await run("-n", ns, "logs", pod)).stdout;
    beforeAll(async () => {
      session = new KubectlSession(agent.ws.db, agent.ws.cli("kubeconfig"));
      expect((await run("create", "namespace", ns)).status).toBe(0);
    });
    afterAll(() => session?.[Symbol.dispose]());

    test("one apply -f: the ConfigMap and Secret reach the env and the volume; an edit of the ConfigMap reaches the file in place", async () => {
      const file = join(session.dir, "app.yaml");
      writeFileSync(
        file,
        `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: ${ns}}
data: {MODE: fast, LEVEL: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: ${ns}}
stringData: {password: hunter2}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${ns}}
spec:
  volumes:
    - {name: config, configMap: {name: web-config, items: [{key: LEVEL, path: level.txt}]}}
  containers:
    - name: web
      image: busybox
      command: [sh, -c, 'echo "mode=$MODE pw=$PW"; while true; do echo "level=$(cat $MINIKUBELET_VOLUME_CONFIG/level.txt)"; sleep 0.2; done']
      envFrom: [{configMapRef: {name: web-config}}]
      env: [{name: PW, valueFrom: {secretKeyRef: {name: web-secret, key: password}}}]
      volumeMounts: [{name: config, mountPath: /etc/web}]
`,
      );
      expect(await run("apply", "-f", file)).toMatchObject({ status: 0, stdout: "configmap/web-config created\nsecret/web-secret created\npod/web created\n" });
      await waitFor("the pod's first lines", async () => (await logs("web")).includes("level=1\n"), 20_000, () => agent.agent.stdout);
      expect((await logs("web")).split("\n")[0]).toBe("mode=fast pw=hunter2");

      // kubectl edit, with a script for the editor.
      const editor = join(session.dir, "edit-level.sh");
      writeFileSync(editor, "#!/bin/sh\nsed -i 's/LEVEL: \"1\"/LEVEL: \"2\"/' \"$1\"\n", { mode: 0o755 });
      expect(await session.run(kubectl, ["-n", ns, "edit", "configmap", "web-config"], { timeoutMs: 60_000, env: { EDITOR: editor } })).toMatchObject({ status: 0, stdout: "configmap/web-config edited\n" });
      await waitFor("the edit in the mounted file", async () => (await logs("web")).includes("level=2\n"), 20_000, () => agent.agent.stdout);
      // The same container saw both: updated in place, not restarted.
      expect((await run("-n", ns, "get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")).stdout).toBe("0");
    });

    test("a Secret that does not exist yet: CreateContainerConfigError with the kubelet's message, then Running once it is created", async () => {
      expect((await run("-n", ns, "run", "waiter", "--image=busybox", "--restart=Never", "--overrides", JSON.stringify({ spec: { containers: [{ name: "waiter", image: "busybox", command: ["sh", "-c", "echo token=$TOKEN; sleep 600"], env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "later", key: "token" } } }] }] } }))).status).toBe(0);
      await waitFor("CreateContainerConfigError", async () => (await run("-n", ns, "get", "pod", "waiter")).stdout.includes("CreateContainerConfigError"), 20_000, () => agent.agent.stdout);
      const waiting = JSON.parse((await run("-n", ns, "get", "pod", "waiter", "-o", "json")).stdout).status.containerStatuses[0].state.waiting;
      expect(waiting).toEqual({ reason: "CreateContainerConfigError", message: 'secret "later" not found' });
      expect((await run("-n", ns, "create", "secret", "generic", "later", "--from-literal=token=t0k3n")).status).toBe(0);
      await waitFor("the pod running with the Secret's value", async () => (await logs("waiter")) === "token=t0k3n\n", 20_000, () => agent.agent.stdout);
    });

    test("a field the agent does not honour: kubectl prints the server's Warning, and the pod records one UnsupportedField event", async () => {
      const file = join(session.dir, "pull.yaml");
      writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: puller, namespace: ${ns}}\nspec:\n  imagePullSecrets: [{name: regcred}]\n  containers:\n    - {name: app, image: busybox, command: [sleep, "600"]}\n`);
      const created = await run("create", "-f", file);
      expect(created).toMatchObject({ status: 0, stdout: "pod/puller created\n", stderr: "Warning: spec.imagePullSecrets: not used: the process runtime pulls no images\n" });
      await waitFor("the UnsupportedField event", async () => (await run("-n", ns, "get", "events", "--field-selector", "reason=UnsupportedField,involvedObject.name=puller", "-o", "name")).stdout.trim() !== "", 20_000, () => agent.agent.stdout);
      // One event, however many times the sources read the pod (each write, each rescan).
      expect((await run("-n", ns, "label", "pod", "puller", "seen=yes")).status).toBe(0);
      await agent.agent.waitForOutput(`UnsupportedField ${ns}/puller`);
      const events = JSON.parse((await run("-n", ns, "get", "events", "--field-selector", "reason=UnsupportedField,involvedObject.name=puller", "-o", "json")).stdout).items;
      expect(events.map((event: { message: string; count?: number }) => [event.message, event.count ?? 1])).toEqual([["spec.imagePullSecrets: not used: the process runtime pulls no images", 1]]);
    });
  });
}
