/**
 * npm's @kubernetes/client-node (1.4.0: the newest whose dependencies run on Node 20; 2.x needs
 * undici 8, Node 22.19) under Node against the compiled agent (process runtime), as a user's
 * script drives it (node-client.mjs): a body without apiVersion or kind is created (the API server
 * takes them from the URL); an informer and the library's Watch see it added, running and
 * deleted; list, read log (readNamespacedPodLog and Log), exec (WebSocket, its Status with the
 * exit code) and delete (port-forward: portforward-clients.test.ts).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { useAgentWithApi } from "../kubectl/harness.ts";
import { runClientScript, stepOf, type Step } from "./client-script.ts";

const SCRIPT = new URL("./node-client.mjs", import.meta.url).pathname;

describe("the @kubernetes/client-node client under Node", () => {
  const live = useAgentWithApi();
  let steps: Map<string, Step>;

  beforeAll(async () => {
    // Node itself, not Bun: the library as its users run it.
    steps = await runClientScript(["node", SCRIPT, live.session.kubeconfig, "default", "node-web"]);
  }, 120_000);

  const step = (name: string): Step => stepOf(steps, name);

  test("a body without apiVersion or kind is created as a Pod", () => {
    step("informer-start");
    step("watch-start");
    expect(step("create")).toMatchObject({ name: "node-web", kind: "Pod", phase: "Pending" });
  });

  test("the informer and the Watch see it added and running", () => {
    const running = step("running") as Step & { watch: string[]; informer: string[]; cached: string[] };
    // A watch event carries the object as it is when the event is sent (the pod may already run), and
    // the pod turns ready a second later: added, then modified.
    expect(running.watch[0]).toStartWith("ADDED:");
    expect(running.watch.length).toBeGreaterThan(1);
    expect(running.watch.at(-1)).toBe("MODIFIED:Running");
    expect(running.informer[0]).toStartWith("add:node-web:");
    expect(running.informer.at(-1)).toBe("update:node-web:Running");
    expect(running.informer.some((event) => event.startsWith("error:"))).toBe(false);
    expect(running.cached).toEqual(["node-web"]);
  });

  test("list by label, read the log both ways, exec with separate streams and its exit code", () => {
    expect(step("list")).toMatchObject({ names: ["node-web"], resourceVersion: expect.stringMatching(/^\d+$/) });
    expect(step("log")).toMatchObject({ text: "hello from node\n", streamed: "hello from node\n" });
    expect(step("exec")).toMatchObject({ stdout: "out\n", stderr: "err\n", status: "Failure", reason: "NonZeroExitCode", exitCode: "3" });
  });


  test("delete answers the pod with its deletionTimestamp; the informer and the Watch see it go", () => {
    expect(step("delete")).toMatchObject({ kind: "Pod", deletionTimestamp: expect.stringMatching(/^\d{4}-/) });
    const gone = step("gone") as Step & { watch: string[]; informer: string[]; cached: string[] };
    expect(gone.watch.at(-1)).toStartWith("DELETED:");
    expect(gone.informer.at(-1)).toStartWith("delete:node-web:");
    expect(gone.cached).toEqual([]);
  });
});
