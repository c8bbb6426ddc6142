/**
 * Real kubectl (the dispatcher on PATH, and 1.27 and 1.33 directly) against a running agent's API
 * in a crash-loop, failing-probe and failing-init scenario: get pods in every output, selectors,
 * describe pod with its Events, events, nodes, describe node, and delete refused. And `kubectl get
 * pods -A` prints the READY, STATUS and RESTARTS that `minikubelet get pods -A` prints.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

let ws: Workspace;
let agent: Agent;
let kubeconfig: string;

const MANIFESTS: Record<string, string> = {
  "web.yaml": `apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
    - name: web
      image: busybox
      command: [sleep, "300"]
      readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
`,
  "crash.yaml": `apiVersion: v1
kind: Pod
metadata: {name: crash, labels: {app: crash}}
spec:
  containers:
    - {name: crash, image: busybox, command: [sh, -c, "exit 1"]}
`,
  "probe.yaml": `apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  containers:
    - name: probe
      image: busybox
      command: [sleep, "300"]
      livenessProbe: {exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 1}
`,
  "init.yaml": `apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  initContainers:
    - {name: setup, image: busybox, command: [sh, -c, "exit 2"]}
  containers:
    - {name: app, image: busybox, command: [sleep, "300"]}
`,
};

beforeAll(async () => {
  ensureBinary();
  ws = new Workspace();
  for (const [file, text] of Object.entries(MANIFESTS)) ws.write(file, text);
  agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
  await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
  await agent.waitForOutput("BackOff default/crash-n1", 30_000);
  await agent.waitForOutput("BackOff default/init-n1", 30_000);
  await agent.waitForOutput("Killing default/probe-n1", 30_000);
  kubeconfig = ws.cli("kubeconfig");
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  ws?.cleanup();
});

/** NAME -> [READY, STATUS, RESTARTS without its "(5s ago)", which ticks between two commands]. */
function columns(table: string): Record<string, string[]> {
  const rows = table.trim().split("\n").slice(1).map((line) => line.split(/\s{3,}/));
  return Object.fromEntries(rows.map(([, name, ready, status, restarts]) => [name!, [ready!, status!, restarts!.replace(/ \(.*\)$/, "")]]));
}

for (const [label, binary] of [
  ["dispatcher", KUBECTL.default],
  ["1.27", KUBECTL.versions["1.27"]],
  ["1.33", KUBECTL.versions["1.33"]],
] as const) {
  describeWithKubectl(`kubectl ${label} reads pods, events and the node`, binary, (kubectl) => {
    const run = async (...args: string[]) => {
      using session = new KubectlSession(ws.db, kubeconfig);
      return await session.run(kubectl, args);
    };

    test("get pods: plain, -A, -o wide, -o json, -o yaml, -l, --field-selector", async () => {
      const plain = await run("get", "pods");
      expect(plain.status).toBe(0);
      expect(plain.stdout.split("\n")[0]).toMatch(/^NAME +READY +STATUS +RESTARTS +AGE$/);
      expect(plain.stdout).toMatch(/^web-n1 +1\/1 +Running +0 /m);
      const all = await run("get", "pods", "-A");
      expect(all.stdout).toMatch(/^NAMESPACE +NAME +READY/);
      expect(all.stdout).toMatch(/default +crash-n1 +0\/1 +(CrashLoopBackOff|Error|Completed|Running)/);
      const wide = await run("get", "pods", "-o", "wide");
      expect(wide.stdout.split("\n")[0]).toMatch(/IP +NODE +NOMINATED NODE +READINESS GATES$/);
      expect(wide.stdout).toMatch(/web-n1 +1\/1 +Running .* n1 +<none> +<none>/);
      const json = JSON.parse((await run("get", "pods", "-o", "json")).stdout);
      expect(json.items.map((p: any) => p.metadata.name).sort()).toEqual(["crash-n1", "init-n1", "probe-n1", "web-n1"]);
      const yaml = await run("get", "pod", "web-n1", "-o", "yaml");
      expect(yaml.stdout).toContain("kind: Pod");
      expect(yaml.stdout).toContain("app: web");
      const labelled = await run("get", "pods", "-l", "app in (web)", "-o", "name");
      expect(labelled.stdout).toBe("pod/web-n1\n");
      const phase = await run("get", "pods", "--field-selector", "status.phase=Pending", "-o", "name");
      expect(phase.stdout).toBe("pod/init-n1\n");
      const bad = await run("get", "pods", "--field-selector", "spec.foo=bar");
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain("field label not supported: spec.foo");
      const missing = await run("get", "pod", "nope");
      expect(missing.stderr).toContain('Error from server (NotFound): pods "nope" not found');
    }, 60_000);

    test("describe pod shows its Events; get events --field-selector; events --for", async () => {
      const described = await run("describe", "pod", "crash-n1");
      expect(described.status).toBe(0);
      expect(described.stdout).toMatch(/Events:\n +Type +Reason +Age +From +Message/);
      expect(described.stdout).toMatch(/Warning +BackOff .* kubelet +Back-off restarting failed container crash in pod crash-n1/);
      expect(described.stdout).not.toContain("web-n1");
      const backoff = await run("get", "events", "--field-selector", "reason=BackOff");
      expect(backoff.stdout.split("\n")[0]).toMatch(/^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$/);
      expect(backoff.stdout).toContain("pod/crash-n1");
      expect(backoff.stdout).not.toContain("Started");
      const forPod = await run("events", "--for", "pod/probe-n1");
      expect(forPod.status).toBe(0);
      expect(forPod.stdout).toMatch(/Warning +Unhealthy +Pod\/probe-n1 +Liveness probe failed/);
      expect(forPod.stdout).not.toContain("crash-n1");
    }, 60_000);

    test("get nodes -o wide and describe node (lease, pods on the node)", async () => {
      const nodes = await run("get", "nodes", "-o", "wide");
      expect(nodes.status).toBe(0);
      expect(nodes.stdout).toMatch(/^n1 +Ready +<none> +\S+ +v1\.\d+\.\d+ +127\.0\.0\.1 +<none> +.+ +process:\/\/minikubelet$/m);
      const described = await run("describe", "node", "n1");
      expect(described.status).toBe(0);
      expect(described.stderr).toBe("");
      expect(described.stdout).toMatch(/Lease:\n +HolderIdentity: +n1\n +AcquireTime: +<unset>\n +RenewTime: +\w{3}, /);
      expect(described.stdout).toMatch(/Ready +True .* KubeletReady/);
      expect(described.stdout).toContain("Non-terminated Pods:          (4 in total)");
      expect(described.stdout).toMatch(/default +web-n1 /);
    }, 60_000);

    test("delete pod is refused with the file to remove", async () => {
      const refused = await run("delete", "pod", "web-n1");
      expect(refused.status).toBe(1);
      expect(refused.stderr.trim()).toBe(`Error from server (MethodNotAllowed): pod web-n1 comes from the manifest file ${join(ws.manifests, "web.yaml")}: remove the file to delete it`);
    }, 30_000);
  });
}

describeWithKubectl("kubectl get pods -A and minikubelet get pods -A", KUBECTL.default, (kubectl) => {
  test("print the same READY, STATUS and RESTARTS for every pod", async () => {
    using session = new KubectlSession(ws.db, kubeconfig);
    // The pods change while we look: compare once two kubectl readings around ours agree.
    const compared = await waitFor(
      "a stable reading",
      async () => {
        const before = columns((await session.run(kubectl, ["get", "pods", "-A"])).stdout);
        const ours = columns(ws.cli("get", "pods", "-A"));
        const after = columns((await session.run(kubectl, ["get", "pods", "-A"])).stdout);
        return JSON.stringify(before) === JSON.stringify(after) && { kubectl: before, ours };
      },
      30_000,
    );
    expect(compared.kubectl).toEqual(compared.ours);
    expect(Object.keys(compared.kubectl).sort()).toEqual(["crash-n1", "init-n1", "probe-n1", "web-n1"]);
    expect(compared.kubectl["web-n1"]).toEqual(["1/1", "Running", "0"]);
    expect(compared.kubectl["init-n1"]![1]).toMatch(/^Init:/);
  }, 60_000);
});
