import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");

test("minikubelet get pods -w prints rows as the agent writes them, and exits 0 on Ctrl-C", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
  const child = spawn(BUN, [join(ROOT, "src/main.ts"), "get", "pods", "-w", "-n", "demo", "--db", h.dbPath], {
    env: { ...process.env, TZ: "UTC", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiters: Array<() => void> = [];
  child.stdout!.on("data", (chunk) => {
    out += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on("data", (chunk) => (err += chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  /** Resolves once stdout has `n` lines; rejects after 5s naming what was seen. */
  const lines = async (n: number) => {
    const deadline = Date.now() + 5000;
    while (out.split("\n").length - 1 < n) {
      if (Date.now() > deadline) throw new Error(`wanted ${n} lines within 5s, got:\n${out}\nstderr: ${err}`);
      await new Promise<void>((wake) => (waiters.push(wake), setTimeout(wake, 200)));
    }
  };
  try {
    await lines(2);
    expect(out.split("\n")[0]).toBe("NAME        READY   STATUS    RESTARTS   AGE");
    // One change per poll: the watch prints a pod's latest object, so steps are awaited one by one.
    await h.advance(1.5); // exit at 1s, immediate restart
    await lines(3);
    await h.advance(1); // exit at 2s, shown while its back-off runs
    await lines(4);
    expect(out.split("\n").slice(2, 4).map((l) => l.split(/\s{2,}/)[2])).toEqual(["Running", "Error"]);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(err).toBe("");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    h.agent.close();
  }
}, 15_000);
