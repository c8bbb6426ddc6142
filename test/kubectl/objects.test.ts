/**
 * Real kubectl (the dispatcher on PATH, and 1.27 and 1.33 directly) against a running agent's API
 * in a crash-loop, failing-probe and failing-init scenario: get pods in every output, selectors,
 * describe pod with its Events, events, nodes, describe node, and delete refused. And `kubectl get
 * pods -A` prints the READY, STATUS and RESTARTS that `minikubelet get pods -A` prints.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { describeWithKubectl, KUBECTL, KUBECTLS_UNDER_TEST, KubectlSession } from "./harness.ts";

/** The docker run has its own namespace and node, so it shares the engine with other tests' agents. */
const RUNS = [
  { runtime: "process", namespace: "default", node: "n1", image: "busybox", wrap: describe },
  { runtime: "docker", namespace: "kubectl-objects", node: "kobj", image: BUSYBOX, wrap: describeDocker },
] as const;

/** The scenario: a ready pod, a crash loop, a failing liveness probe and a failing init container. */
function manifests(namespace: string, image: string): Record<string, string> {
  const pull = image === "busybox" ? "" : ", imagePullPolicy: Never";
  const meta = (name: string, labels = "") => `apiVersion: v1\nkind: Pod\nmetadata: {namespace: ${namespace}, name: ${name}${labels}}\nspec:\n`;
  return {
    "web.yaml": `${meta("web", ", labels: {app: web}")}  containers:
    - {name: web, image: ${image}${pull}, command: [sleep, "300"], readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}}
`,
    "crash.yaml": `${meta("crash", ", labels: {app: crash}")}  containers:
    - {name: crash, image: ${image}${pull}, command: [sh, -c, "exit 1"]}
`,
    "probe.yaml": `${meta("probe")}  containers:
    - {name: probe, image: ${image}${pull}, command: [sleep, "300"], livenessProbe: {exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 1}}
`,
    "init.yaml": `${meta("init")}  initContainers:
    - {name: setup, image: ${image}${pull}, command: [sh, -c, "exit 2"]}
  containers:
    - {name: app, image: ${image}${pull}, command: [sleep, "300"]}
`,
  };
}

/** NAME -> [READY, STATUS, RESTARTS without its "(5s ago)", which ticks between two commands]. */
function columns(table: string): Record<string, string[]> {
  const rows = table.trim().split("\n").slice(1).map((line) => line.split(/\s{3,}/));
  return Object.fromEntries(rows.map(([, name, ready, status, restarts]) => [name!, [ready!, status!, restarts!.replace(/ \(.*\)$/, "")]]));
}


for (const { runtime, namespace: ns, node, image, wrap } of RUNS) {
  wrap(`kubectl against an agent on the ${runtime} runtime`, () => {
    let ws: Workspace;
    let agent: Agent;
    let kubeconfig: string;
    const pod = (name: string) => `${name}-${node}`;

    beforeAll(async () => {
      ensureBinary();
      ws = new Workspace();
      for (const [file, text] of Object.entries(manifests(ns, image))) ws.write(file, text);
      agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit", "--runtime", runtime], { node });
      await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
      await agent.waitForOutput(`BackOff ${ns}/${pod("crash")}`, 60_000);
      await agent.waitForOutput(`BackOff ${ns}/${pod("init")}`, 60_000);
      await agent.waitForOutput(`Killing ${ns}/${pod("probe")}`, 60_000);
      kubeconfig = ws.cli("kubeconfig");
    }, 180_000);

    afterAll(async () => {
      // Their sleeps as PID 1 wait out a 30 s grace under docker: the agent is hurried, the containers removed below.
      await agent?.terminate(20_000, runtime === "docker" ? 2_000 : undefined);
      ws?.cleanup();
      if (runtime === "docker") {
        const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${ns}`] } });
        await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      }
    }, 60_000);

    for (const [label, binary] of KUBECTLS_UNDER_TEST) {
      describeWithKubectl(label, binary, (kubectl) => {
        const run = async (...args: string[]) => {
          using session = new KubectlSession(ws.db, kubeconfig);
          return await session.run(kubectl, ["-n", ns, ...args]);
        };

        test("get pods: plain, -A, -o wide, -o json, -o yaml, -l, --field-selector", async () => {
          const plain = await run("get", "pods");
          expect(plain.status).toBe(0);
          expect(plain.stdout.split("\n")[0]).toMatch(/^NAME +READY +STATUS +RESTARTS +AGE$/);
          expect(plain.stdout).toMatch(new RegExp(`^${pod("web")} +1/1 +Running +0 `, "m"));
          const all = await run("get", "pods", "-A");
          expect(all.stdout).toMatch(/^NAMESPACE +NAME +READY/);
          // 1/1 for the moment a restarted attempt runs before its `exit 1` (longer on the docker runtime).
          expect(all.stdout).toMatch(new RegExp(`^${ns} +${pod("crash")} +[01]/1 +`, "m"));
          const wide = await run("get", "pods", "-o", "wide");
          expect(wide.stdout.split("\n")[0]).toMatch(/IP +NODE +NOMINATED NODE +READINESS GATES$/);
          expect(wide.stdout).toMatch(new RegExp(`^${pod("web")} +1/1 +Running .* ${node} +<none> +<none>$`, "m"));
          const json = JSON.parse((await run("get", "pods", "-o", "json")).stdout);
          expect(json.items.map((p: any) => p.metadata.name).sort()).toEqual(["crash", "init", "probe", "web"].map(pod));
          const yaml = await run("get", "pod", pod("web"), "-o", "yaml");
          expect(yaml.stdout).toContain("kind: Pod");
          expect(yaml.stdout).toContain("app: web");
          expect((await run("get", "pods", "-l", "app in (web)", "-o", "name")).stdout).toBe(`pod/${pod("web")}\n`);
          expect((await run("get", "pods", "--field-selector", "status.phase=Pending", "-o", "name")).stdout).toBe(`pod/${pod("init")}\n`);
          const bad = await run("get", "pods", "--field-selector", "spec.foo=bar");
          expect(bad.status).toBe(1);
          expect(bad.stderr).toContain("field label not supported: spec.foo");
          const missing = await run("get", "pod", "nope");
          expect(missing.stderr).toContain('Error from server (NotFound): pods "nope" not found');
          // kubectl asks whether the namespace exists after a 404 in any namespace but default.
          const nowhere = await run("get", "pod", "nope", "-n", "nowhere");
          expect(nowhere.stderr).toContain('Error from server (NotFound): namespaces "nowhere" not found');
        }, 60_000);

        test("describe pod shows its Events; get events --field-selector; events --for", async () => {
          const described = await run("describe", "pod", pod("crash"));
          expect(described.status).toBe(0);
          expect(described.stdout).toMatch(/Events:\n +Type +Reason +Age +From +Message/);
          expect(described.stdout).toMatch(new RegExp(`Warning +BackOff .* kubelet +Back-off restarting failed container crash in pod ${pod("crash")}`));
          expect(described.stdout).not.toContain(pod("web"));
          const backoff = await run("get", "events", "--field-selector", "reason=BackOff");
          expect(backoff.stdout.split("\n")[0]).toMatch(/^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$/);
          expect(backoff.stdout).toContain(`pod/${pod("crash")}`);
          expect(backoff.stdout).not.toContain("Started");
          const probed = await run("describe", "pod", pod("probe"));
          // The probe as written: the pod object echoes the manifest's spec without the API's defaults (timeout, thresholds).
          expect(probed.stdout).toMatch(/Liveness: +exec \[false\] delay=0s timeout=\d+s period=1s #success=\d+ #failure=1\n/);
          expect(probed.stdout).toMatch(/Warning +Unhealthy .* kubelet +Liveness probe failed/);
          const forPod = await run("events", "--for", `pod/${pod("probe")}`);
          expect(forPod.status).toBe(0);
          expect(forPod.stdout).toMatch(new RegExp(`Warning +Unhealthy +Pod/${pod("probe")} +Liveness probe failed`));
          expect(forPod.stdout).not.toContain(pod("crash"));
        }, 60_000);

        test("get nodes -o wide and describe node (lease, pods on the node)", async () => {
          const nodes = await run("get", "nodes", "-o", "wide");
          expect(nodes.status).toBe(0);
          expect(nodes.stdout).toMatch(new RegExp(`^${node} +Ready +<none> +\\S+ +v1\\.\\d+\\.\\d+ +127\\.0\\.0\\.1 +<none> +.+ +${runtime}://\\S+$`, "m"));
          const described = await run("describe", "node", node);
          expect(described.status).toBe(0);
          expect(described.stderr).toBe("");
          expect(described.stdout).toMatch(new RegExp(`Lease:\\n +HolderIdentity: +${node}\\n +AcquireTime: +<unset>\\n +RenewTime: +\\w{3}, `));
          expect(described.stdout).toMatch(/Ready +True .* KubeletReady/);
          expect(described.stdout).toContain("Non-terminated Pods:          (4 in total)");
          expect(described.stdout).toMatch(new RegExp(`${ns} +${pod("web")} `));
        }, 60_000);

        test("delete pod is refused with the file to remove", async () => {
          const refused = await run("delete", "pod", pod("web"));
          expect(refused.status).toBe(1);
          expect(refused.stderr.trim()).toBe(`Error from server (MethodNotAllowed): pod ${pod("web")} comes from the manifest file ${join(ws.manifests, "web.yaml")}: remove the file to delete it`);
        }, 30_000);

        test("apply of a new pod creates it (then deleted again); of a running manifest, names its file", async () => {
          const fresh = join(ws.path, "fresh.yaml");
          await Bun.write(fresh, manifests(ns, image)["web.yaml"]!.replace("name: web,", "name: fresh,"));
          const created = await run("apply", "-f", fresh);
          expect(created).toMatchObject({ status: 0, stdout: "pod/fresh created\n" });
          await waitFor("fresh Running", async () => / Running /.test((await run("get", "pod", "fresh")).stdout), 30_000);
          const deleted = await run("delete", "pod", "fresh", "--grace-period=1");
          expect(deleted).toMatchObject({ status: 0, stdout: 'pod "fresh" deleted\n' });
          expect((await run("get", "pod", "fresh")).status).toBe(1);
          const existing = await run("apply", "-f", join(ws.manifests, "web.yaml"));
          expect(existing.status).toBe(1);
          expect(existing.stderr).toContain(`pod ${pod("web")} comes from the manifest file ${join(ws.manifests, "web.yaml")}: edit the file to change it`);
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
        expect(Object.keys(compared.kubectl).sort()).toEqual(["crash", "init", "probe", "web"].map(pod));
        expect(compared.kubectl[pod("web")]).toEqual(["1/1", "Running", "0"]);
        expect(compared.kubectl[pod("init")]![1]).toMatch(/^Init:/);
      }, 60_000);
    });
  });
}
