/**
 * Namespaces with the real kubectl (the dispatcher, 1.27 and 1.33) against the compiled agent on
 * the process runtime: get ns and api-resources list them, create namespace makes one (1.33 POSTs
 * it as protobuf), delete ns stops its API pods and returns once the namespace is gone, and the
 * refusals read as the API server's: a file's pods, an immortal namespace, a pod in a namespace
 * that does not exist.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, startAgentWithApi } from "./harness.ts";

let ws: Workspace;
let agent: Agent;
let first: KubectlSession;

beforeAll(async () => {
  ws = new Workspace();
  ws.write("web.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: files}\nspec:\n  containers:\n    - {name: web, image: busybox, command: [sleep, '600']}\n");
  ({ agent, session: first } = await startAgentWithApi(ws, ["--stop-pods-on-exit"]));
  await agent.waitForOutput("Started files/web-n1 web", 15_000);
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  first?.[Symbol.dispose]();
  ws?.cleanup();
}, 60_000);

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(`namespaces with ${label}`, binary, (kubectl) => {
    // A session (kubeconfig, discovery cache) per kubectl: each finds the API as it is now.
    let session: KubectlSession;
    const team = `team-${label.replace(/\D/g, "") || "dispatcher"}`;
    const run = (...args: string[]) => session.run(kubectl, args, { timeoutMs: 60_000 });
    beforeAll(() => {
      session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
    });
    afterAll(() => session?.[Symbol.dispose]());

    test("get ns: the system namespaces and the file pod's, NAME STATUS AGE; api-resources lists namespaces as ns", async () => {
      const listed = await run("get", "ns");
      expect(listed.stderr).toBe("");
      const lines = listed.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^NAME\s+STATUS\s+AGE$/);
      const rows = lines.slice(1).map((line) => line.split(/\s+/).slice(0, 2).join(" "));
      expect(rows.filter((row) => !row.startsWith("team-"))).toEqual(["default Active", "files Active", "kube-node-lease Active", "kube-public Active", "kube-system Active"]);
      const resources = await run("api-resources");
      expect(resources.stdout).toMatch(/\nnamespaces\s+ns\s+v1\s+false\s+Namespace\n/);
    });

    test("create namespace, then a pod in it; delete ns stops the pod and returns once the namespace is gone", async () => {
      expect(await run("create", "namespace", team)).toMatchObject({ status: 0, stdout: `namespace/${team} created\n` });
      const again = await run("create", "namespace", team);
      expect(again).toMatchObject({ status: 1, stderr: `Error from server (AlreadyExists): namespaces "${team}" already exists\n` });
      const shown = JSON.parse((await run("get", "ns", team, "-o", "json")).stdout);
      expect(shown).toMatchObject({ kind: "Namespace", metadata: { name: team, labels: { "kubernetes.io/metadata.name": team } }, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });

      expect((await run("-n", team, "run", "sleeper", "--image=busybox", "--command", "--", "sleep", "3600")).status).toBe(0);
      await waitFor(`pod ${team}/sleeper Running`, async () => (await run("-n", team, "get", "pod", "sleeper", "-o", "jsonpath={.status.phase}")).stdout === "Running", 15_000, () => agent.stdout);

      const deleted = await run("delete", "ns", team);
      expect(deleted).toMatchObject({ status: 0, stdout: `namespace "${team}" deleted\n` });
      expect(await run("get", "ns", team)).toMatchObject({ status: 1, stderr: `Error from server (NotFound): namespaces "${team}" not found\n` });
      expect(agent.stdout).toContain(`Killing ${team}/sleeper sleeper: Stopping container sleeper`);
      expect((await run("get", "pods", "-A", "-o", "name")).stdout).not.toContain("sleeper");
    });

    test("the refusals: a namespace with a file's pod, an immortal namespace, a pod in a namespace that does not exist", async () => {
      const files = await run("delete", "ns", "files");
      expect(files.status).toBe(1);
      expect(files.stderr).toBe(`Error from server (MethodNotAllowed): namespace files holds pods from manifest files (${ws.manifests}/web.yaml): remove the files to delete their pods, then delete the namespace\n`);
      expect(await run("delete", "ns", "default")).toMatchObject({ status: 1, stderr: 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted\n' });
      const nowhere = await run("-n", "nowhere", "run", "sleeper", "--image=busybox", "--command", "--", "sleep", "1");
      expect(nowhere).toMatchObject({ status: 1, stderr: 'Error from server (NotFound): namespaces "nowhere" not found\n' });
    });
  });
}
