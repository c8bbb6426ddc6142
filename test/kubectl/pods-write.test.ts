/**
 * Pods from kubectl against the compiled agent (issue 13), on both runtimes: create, run, apply of
 * a new pod, generateName, invalid pods refused with their field paths, a name a file holds, and
 * delete (grace, a TERM-ignoring container killed with 137, a file's pod refused).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

/** The docker run has its own namespace and node, so it shares the engine with other tests' agents. */
const RUNS = [
  { runtime: "process", namespace: "default", node: "n1", image: "busybox", pull: "", wrap: describe },
  { runtime: "docker", namespace: "kubectl-writes", node: "kwrite", image: BUSYBOX, pull: ", imagePullPolicy: Never", wrap: describeDocker },
] as const;

for (const { runtime, namespace: ns, node, image, pull, wrap } of RUNS) {
  wrap(`kubectl writes pods on the ${runtime} runtime`, () => {
    let ws: Workspace;
    let agent: Agent;
    let session: KubectlSession;
    const filePod = `sleeper-${node}`;

    beforeAll(async () => {
      ws = new Workspace();
      ws.write("sleeper.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper, namespace: ${ns}}\nspec:\n  containers:\n    - {name: sleeper, image: ${image}${pull}, command: [sleep, '60']}\n`);
      ensureBinary();
      agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit", "--runtime", runtime], { node });
      await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
      session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      await agent.waitForOutput(`Started ${ns}/${filePod} sleeper`, 30_000);
    }, 120_000);

    afterAll(async () => {
      // Their sleeps as PID 1 wait out a 30 s grace under docker: the agent is hurried, the containers removed below.
      await agent?.terminate(20_000, runtime === "docker" ? 2_000 : undefined);
      session?.[Symbol.dispose]();
      ws?.cleanup();
      if (runtime === "docker") {
        const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${ns}`] } });
        await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      }
    }, 60_000);

    /** A pod manifest in the session's folder (not the manifest directory: kubectl sends it). */
    function podFile(name: string, text: string): string {
      const path = join(session.dir, name);
      writeFileSync(path, text);
      return path;
    }

    const podYaml = (name: string, command = "[sleep, '3600']") =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - {name: app, image: ${image}${pull}, command: ${command}}\n`;

    describeWithKubectl("pods created and deleted with kubectl", KUBECTL.default, (kubectl) => {
      const get = async (name: string) => {
        const result = await session.run(kubectl, ["-n", ns, "get", "pod", name, "-o", "json"]);
        return result.status === 0 ? (JSON.parse(result.stdout) as { metadata: Record<string, any>; status: { phase: string } }) : undefined;
      };
      const running = (name: string) => waitFor(`pod ${name} Running`, async () => (await get(name))?.status.phase === "Running", 15_000, () => agent.stdout);

      test("create -f: 201 with the stored pod, then get pods shows it Running under its own name, from the API", async () => {
        const created = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("web.yaml", podYaml("web")), "-o", "json"]);
        expect(created.status).toBe(0);
        const object = JSON.parse(created.stdout);
        const uid = object.metadata.uid;
        expect(uid).toMatch(/^[0-9a-f-]{36}$/);
        expect(object.metadata.resourceVersion).toMatch(/^\d+$/);
        expect(object.metadata).toMatchObject({ name: "web", namespace: ns });
        expect(object.spec.containers[0]).toMatchObject({ imagePullPolicy: pull ? "Never" : "Always", terminationMessagePath: "/dev/termination-log" });
        await running("web");
        const table = await session.run(kubectl, ["-n", ns, "get", "pods"]);
        expect(table.stdout).toMatch(/\nweb\s+1\/1\s+Running\s+0 /);
        const served = (await get("web"))!;
        expect(served.metadata.uid).toBe(uid);
        expect(served.metadata.annotations["kubernetes.io/config.source"]).toBe("api");
        expect(served.metadata.creationTimestamp).toBe(object.metadata.creationTimestamp);
        const again = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("web.yaml", podYaml("web"))]);
        expect(again.status).toBe(1);
        expect(again.stderr).toContain('Error from server (AlreadyExists): error when creating');
        expect(again.stderr).toContain('pods "web" already exists');
      }, 60_000);

      test("run NAME --image -- cmd, apply -f of a new pod, and generateName", async () => {
        const run = await session.run(kubectl, ["-n", ns, "run", "runner", `--image=${image}`, ...(pull ? ["--image-pull-policy=Never"] : []), "--command", "--", "sleep", "3600"]);
        expect(run).toMatchObject({ status: 0, stdout: "pod/runner created\n" });
        const applied = await session.run(kubectl, ["-n", ns, "apply", "-f", podFile("applied.yaml", podYaml("applied"))]);
        expect(applied).toMatchObject({ status: 0, stdout: "pod/applied created\n" });
        const generated = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("gen.yaml", podYaml("x").replace("{name: x}", "{generateName: gen-}"))]);
        expect(generated.stdout).toMatch(/^pod\/gen-[bcdfghjklmnpqrstvwxz2456789]{5} created\n$/);
        await running("runner");
        await running("applied");
        expect((await get("runner"))!.metadata.labels).toEqual({ run: "runner" });
        expect((await get("applied"))!.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]).toContain('"name":"applied"');
      }, 60_000);

      test("invalid pods are refused with every field path, as the API server words them", async () => {
        const noImage = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n    - {name: app, command: [sleep, '1']}\n")]);
        expect(noImage.status).toBe(1);
        expect(noImage.stderr.trim()).toBe('The Pod "bad" is invalid: spec.containers[0].image: Required value');
        const two = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("bad2.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad2}\nspec:\n  restartPolicy: Sometimes\n  containers:\n    - {name: App, image: busybox, command: [x]}\n")]);
        expect(two.status).toBe(1);
        expect(two.stderr).toContain('The Pod "bad2" is invalid: \n');
        expect(two.stderr).toContain("* spec.restartPolicy: Invalid value: ");
        expect(two.stderr).toContain("* spec.containers[0].name: Invalid value: ");
        const unknown = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("bad3.yaml", podYaml("bad3").replace("command:", "comand: [x], command:"))]);
        expect(unknown.status).toBe(1);
        expect(unknown.stderr).toContain('unknown field "spec.containers[0].comand"');
        // KEP-5307: rules need the container's own restartPolicy, and only In and NotIn compare exit codes.
        const rules = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("bad4.yaml", podYaml("bad4").replace("command:", "restartPolicyRules: [{action: Restart, exitCodes: {operator: Is, values: [42]}}], command:"))]);
        expect(rules.status).toBe(1);
        expect(rules.stderr).toContain('The Pod "bad4" is invalid: \n');
        expect(rules.stderr).toContain("* spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used");
        expect(rules.stderr).toContain('* spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"');
        expect((await session.run(kubectl, ["-n", ns, "get", "pods", "-o", "name"])).stdout).not.toContain("bad");
      }, 60_000);

      test("a manifest file defining a pod the API holds is refused, naming the API pod; the API pod runs on", async () => {
        const created = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("taken.yaml", podYaml(`taken-${node}`)), "-o", "jsonpath={.metadata.uid}"]);
        expect(created.status).toBe(0);
        await running(`taken-${node}`);
        ws.write("taken.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: taken, namespace: ${ns}}\nspec:\n  containers:\n    - {name: app, image: ${image}${pull}, command: [sleep, '60']}\n`);
        const why = `Warning Invalid ${ns}/taken.yaml: manifest ${join(ws.manifests, "taken.yaml")} is invalid, not run until it is fixed: pod ${ns}/taken-${node} already exists, created through the API (uid ${created.stdout}); ignoring this file`;
        await agent.waitForOutput(why, 15_000);
        const table = ws.run("get", "pods", "-n", ns);
        expect(table.stdout).toMatch(/\ntaken\.yaml\s+0\/0\s+Invalid /);
        expect((await get(`taken-${node}`))!.metadata.uid).toBe(created.stdout);
        ws.remove("taken.yaml");
      }, 30_000);

      test("--dry-run=server stores nothing; a body naming another namespace than the URL is the API server's 400", async () => {
        const dry = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("dry.yaml", podYaml("dry")), "--dry-run=server"]);
        expect(dry).toMatchObject({ status: 0, stdout: "pod/dry created (server dry run)\n" });
        expect((await session.run(kubectl, ["-n", ns, "get", "pod", "dry"])).status).toBe(1);
        expect(ws.query("SELECT name FROM api_pods WHERE name = 'dry'")).toEqual([]);
        const other = podFile("other.json", JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "other", namespace: "elsewhere" }, spec: { containers: [{ name: "app", image, command: ["sleep", "1"] }] } }));
        const raw = await session.run(kubectl, ["create", "--raw", `/api/v1/namespaces/${ns}/pods`, "-f", other]);
        expect(raw.status).toBe(1);
        expect(raw.stderr).toContain("the namespace of the provided object does not match the namespace sent on the request");
      }, 30_000);

      test("a name a manifest file's pod holds is taken", async () => {
        const clash = await session.run(kubectl, ["-n", ns, "create", "-f", podFile("clash.yaml", podYaml(filePod))]);
        expect(clash.status).toBe(1);
        expect(clash.stderr).toContain(`pods "${filePod}" already exists: it comes from the manifest file ${join(ws.manifests, "sleeper.yaml")}`);
      }, 30_000);

      test("delete --grace-period=2 of a pod that ignores SIGTERM: Terminating, killed after 2s with 137, gone when kubectl returns", async () => {
        const stubborn = `apiVersion: v1\nkind: Pod\nmetadata: {name: stubborn}\nspec:\n  containers:\n    - {name: app, image: ${image}${pull}, command: [sh, -c, 'trap \"\" TERM; while true; do sleep 1; done']}\n`;
        expect((await session.run(kubectl, ["-n", ns, "create", "-f", podFile("stubborn.yaml", stubborn)])).status).toBe(0);
        await running("stubborn");
        const uid = (await get("stubborn"))!.metadata.uid as string;
        const started = Date.now();
        const deleted = await session.run(kubectl, ["-n", ns, "delete", "pod", "stubborn", "--grace-period=2"], { timeoutMs: 30_000 });
        const tookMs = Date.now() - started;
        expect(deleted).toMatchObject({ status: 0, stdout: 'pod "stubborn" deleted\n' });
        expect(tookMs).toBeGreaterThanOrEqual(2000);
        expect(await get("stubborn")).toBeUndefined();
        expect(ws.query<{ exit_code: number }>("SELECT exit_code FROM attempts WHERE pod_uid = ?", uid)).toEqual([{ exit_code: 137 }]);
        expect(ws.query("SELECT name FROM api_pods WHERE name = 'stubborn'")).toEqual([]);
        expect(agent.stdout).toMatch(new RegExp(`Warning GraceExpired ${ns}/stubborn app: Container app did not stop within its grace period \\([\\d.]+s\\); sending SIGKILL`));
      }, 60_000);

      test("delete --now and --force --grace-period=0 end the pod; a file's pod is refused with its file", async () => {
        expect((await session.run(kubectl, ["-n", ns, "delete", "pod", "runner", "--now"], { timeoutMs: 30_000 })).status).toBe(0);
        const forced = await session.run(kubectl, ["-n", ns, "delete", "pod", "applied", "--force", "--grace-period=0"], { timeoutMs: 30_000 });
        expect(forced).toMatchObject({ status: 0, stdout: 'pod "applied" force deleted\n' });
        await waitFor("applied to be gone", async () => (await get("applied")) === undefined, 15_000);
        const file = await session.run(kubectl, ["-n", ns, "delete", "pod", filePod]);
        expect(file.status).toBe(1);
        expect(file.stderr).toContain(`Error from server (MethodNotAllowed): pod ${filePod} comes from the manifest file ${join(ws.manifests, "sleeper.yaml")}: remove the file to delete it`);
        const missing = await session.run(kubectl, ["-n", ns, "delete", "pod", "nope"]);
        expect(missing.stderr).toContain('Error from server (NotFound): pods "nope" not found');
      }, 60_000);

      test("after kill -9 and a restart, an API pod is adopted: same uid, same container, no restart", async () => {
        const before = (await get("web"))!;
        await agent.kill9();
        session[Symbol.dispose]();
        agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit", "--runtime", runtime], { node });
        await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
        session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        await running("web");
        const after = (await get("web")) as unknown as { metadata: Record<string, any>; status: { containerStatuses: { containerID: string; restartCount: number }[] } };
        const was = before as unknown as typeof after;
        expect(after.metadata.uid).toBe(before.metadata.uid);
        expect(after.metadata.creationTimestamp).toBe(before.metadata.creationTimestamp);
        expect(after.status.containerStatuses[0]!.containerID).toBe(was.status.containerStatuses[0]!.containerID);
        expect(after.status.containerStatuses[0]!.restartCount).toBe(0);
        expect(agent.stdout).not.toContain(`Started ${ns}/web `);
      }, 60_000);
    });
  });
}
