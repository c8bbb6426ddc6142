/**
 * Watches seen by real kubectl: `get pods -w` and `get pod X -w` following a crash loop, `get events
 * -w`, and `kubectl events -w` (which only watches), through the dispatcher and the oldest and newest
 * kubectl. The kubelet runs on the fake runtime and clock, writing a real database; the API serves it
 * in this process with the store's commits on its feed, as `run` wires them. Each command runs until
 * the server stops, which ends its watch cleanly (kubectl then exits 0).
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { apiRoutes } from "../../src/api/routes.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials, recordServerAddress } from "../../src/api/http/tls.ts";
import { openWatches } from "../../src/api/watch/watch-hub.ts";
import { openReadonlyDatabase } from "../../src/store/open.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession } from "./harness.ts";

let dir: ReturnType<typeof tempDir>;
let h: ReturnType<typeof storeHarness>;
let api: ApiContext;
let server: ApiServer | undefined;
let session: KubectlSession;

beforeEach(() => {
  dir = tempDir("minikubelet-kubectl-watch-");
  h = storeHarness(dir.path);
  const commits = new CommitBroadcast();
  const store = h.store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ["savePod", "deletePod"]) {
    const original = store[method]!.bind(h.store);
    store[method] = (...args: unknown[]) => {
      const result = original(...args);
      commits.publish(0);
      return result;
    };
  }
  api = { store: new StoreReader(openReadonlyDatabase(h.dbPath)), dbPath: h.dbPath, clock: h.clock, nodeName: "lab", commits, limits: DEFAULT_LIMITS };
  const credentials = ensureCredentials(h.dbPath, "127.0.0.1");
  server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context: api, routes: apiRoutes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  recordServerAddress(h.dbPath, server.url);
  session = new KubectlSession(h.dbPath);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
});

afterEach(async () => {
  await server?.stop();
  h.kubelet.stop();
  api.store.db.close();
  h.agent.close();
  session[Symbol.dispose]();
  dir[Symbol.dispose]();
});

/**
 * Runs kubectl until its watch is open, lets `act` change the store, gives the lines time to reach
 * kubectl (delivery takes milliseconds: bench/api-watch.ts), then ends kubectl and returns what it printed.
 */
async function watching(kubectl: string, args: string[], act: () => Promise<void>) {
  const child = spawn(kubectl, ["--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TZ: "UTC", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += String(chunk)));
  child.stderr.on("data", (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    for (let waited = 0; openWatches(api) === 0; waited += 20) {
      if (child.exitCode !== null || waited > 20_000) throw new Error(`kubectl never opened its watch: ${stdout}${stderr}`);
      await Bun.sleep(20);
    }
    await act();
    await Bun.sleep(1000);
  } finally {
    child.kill("SIGTERM");
  }
  await exited;
  return { stdout, stderr };
}

const crash = pod({ name: "crash", containers: [container("crash")] });
const web = pod({ name: "web" });

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(`watch with ${label}`, binary, (kubectl) => {
    test("get pods -w prints the list, then each change of a crash loop and a removed pod", async () => {
      await h.kubelet.sync(desired(crash, web));
      await h.advance(0.5);
      const result = await watching(kubectl, ["get", "pods", "-n", "demo", "-w"], async () => {
        await h.advance(2.5);
        await h.kubelet.sync(desired(crash));
        await h.advance(1);
      });
      expect(result.stderr).toBe("");
      const rows = result.stdout.trimEnd().split("\n").map((line) => line.split(/\s+/).slice(0, 4).join(" "));
      expect(rows).toEqual([
        "NAME READY STATUS RESTARTS",
        "crash-lab 1/1 Running 0",
        "web-lab 1/1 Running 0",
        "crash-lab 1/1 Running 1",
        // The exit at 2s, shown while its back-off runs.
        "crash-lab 0/1 Error 1",
        // The removed pod's last object: gone for good, it ended Failed (its container stopped with
        // 143), and kubectl prints a terminal pod's reason, not Terminating.
        "web-lab 0/1 Error 0",
        // The pass the removal brings shows the back-off the exit met, as any pass during the wait.
        "crash-lab 0/1 CrashLoopBackOff 1",
      ]);
    }, 60_000);

    test("get pod NAME -w: the first change after the GET is printed (the synthetic ADDED is what kubectl drops)", async () => {
      await h.kubelet.sync(desired(crash, web));
      await h.advance(0.5);
      const result = await watching(kubectl, ["get", "pod", "crash-lab", "-n", "demo", "-w"], () => h.advance(2.5));
      expect(result.stderr).toBe("");
      const rows = result.stdout.trimEnd().split("\n").map((line) => line.split(/\s+/).slice(0, 4).join(" "));
      expect(rows).toEqual(["NAME READY STATUS RESTARTS", "crash-lab 1/1 Running 0", "crash-lab 1/1 Running 1", "crash-lab 0/1 Error 1"]);
    }, 60_000);

    test("get events -w and kubectl events -w (which only watches) print the new events", async () => {
      await h.kubelet.sync(desired(crash));
      await h.advance(0.5);
      const got = await watching(kubectl, ["get", "events", "-n", "demo", "-w"], () => h.advance(2.5));
      expect(got.stderr).toBe("");
      const reasons = (text: string) => text.trimEnd().split("\n").slice(1).map((line) => line.split(/\s+/).slice(1, 4).join(" "));
      expect(reasons(got.stdout)).toEqual([
        "Normal Created pod/crash-lab",
        "Normal Started pod/crash-lab",
        "Warning Exited pod/crash-lab",
        "Normal Created pod/crash-lab",
        "Normal Started pod/crash-lab",
        "Warning Exited pod/crash-lab",
        "Warning BackOff pod/crash-lab",
      ]);
      for (let waited = 0; openWatches(api) > 0 && waited < 5000; waited += 20) await Bun.sleep(20);
      const only = await watching(kubectl, ["events", "-n", "demo", "-w"], () => h.advance(10));
      expect(only.stderr).toBe("");
      // The events as they were when the watch opened (ADDED), then each repeat as it happened.
      const rows = only.stdout.trimEnd().split("\n").slice(1).map((line) => `x${/\(x(\d+) over/.exec(line)?.[1] ?? 1} ${/(Normal|Warning)\s+\w+/.exec(line)?.[0].replace(/\s+/, " ")}`);
      expect(rows).toEqual([
        "x2 Normal Created",
        "x2 Normal Started",
        "x2 Warning Exited",
        "x1 Warning BackOff",
        "x3 Normal Created",
        "x3 Normal Started",
        "x3 Warning Exited",
        "x2 Warning BackOff",
      ]);
    }, 60_000);
  });
}
