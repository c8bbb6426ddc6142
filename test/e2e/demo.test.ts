/**
 * The README's Quick start as a new user types it: `scripts/demo` in one terminal, then
 * `minikubelet get pods` and `describe pod web-lab` in another, with no --db and no -n. The default
 * database is pinned through $MINIKUBELET_DB (the test may run as root, whose default is
 * /var/lib/minikubelet), which is how the commands find it without a flag.
 */
import { afterEach, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, ENV, ROOT, processesMentioning, removeProcessState, waitFor } from "./helpers.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("after scripts/demo, `get pods` and `describe pod web-lab` work exactly as typed", async () => {
  const state = mkdtempSync(join(tmpdir(), "minikubelet-demo-e2e-"));
  cleanups.push(() => {
    removeProcessState(join(state, "state.db"));
    rmSync(state, { recursive: true, force: true });
  });
  const env = { ...ENV, MINIKUBELET_DB: join(state, "state.db") };
  const demo = spawn(join(ROOT, "scripts/demo"), [], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  demo.stdout!.on("data", (chunk) => (output += String(chunk)));
  demo.stderr!.on("data", (chunk) => (output += String(chunk)));
  const exited = new Promise((done) => demo.once("exit", done));
  cleanups.push(async () => {
    if (demo.exitCode === null && demo.signalCode === null) {
      process.kill(demo.pid!, "SIGTERM");
      await exited;
    }
    for (const left of processesMentioning(state)) process.kill(left.pid, "SIGKILL");
  });

  await waitFor("web-lab to be ready", () => output.includes("Ready default/web-lab web"), 45_000, () => output);
  await waitFor("crash-lab to crash", () => output.includes("BackOff default/crash-lab crash"), 20_000, () => output);

  const typed = (...args: string[]) => spawnSync(BINARY, args, { env, encoding: "utf8" });
  // A crash loop's restart leaves it Running for the moment before the next crash: a `get` may
  // land in it, so it is typed again until it shows the loop between two attempts.
  const get = await waitFor("get pods to show crash-lab between two attempts", () => {
    const typedGet = typed("get", "pods");
    return typedGet.status !== 0 || /^crash-lab +0\/1 /m.test(typedGet.stdout) ? typedGet : undefined;
  }, 20_000, () => output);
  expect(get.stderr).toBe("");
  expect(get.status).toBe(0);
  expect(get.stdout).toMatch(/^crash-lab +0\/1 /m);
  expect(get.stdout).toMatch(/^web-lab +1\/1 +Running /m);
  const describe = typed("describe", "pod", "web-lab");
  expect(describe.status).toBe(0);
  expect(describe.stdout).toMatch(/^Namespace: +default$/m);
}, 90_000);
