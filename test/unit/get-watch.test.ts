import { expect, test } from "bun:test";
import { getCommand } from "../../src/cli/get/get.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

/** Starts `get pods -w` against the harness's database; resolves once the list is printed (the watch is then armed). */
async function watch(h: ReturnType<typeof storeHarness>, options: { output?: string; namespace?: string; allNamespaces?: boolean } = {}) {
  const controller = new AbortController();
  let out = "";
  let listed!: () => void;
  const printed = new Promise<void>((resolve) => (listed = resolve));
  const done = getCommand("pods", undefined, { db: h.dbPath, namespace: "demo", watch: true, ...options }, {
    clock: h.clock,
    signal: controller.signal,
    stdout: (text) => {
      out += text;
      listed();
    },
    stderr: (text) => (out += `stderr: ${text}`),
  });
  await Promise.race([printed, done]);
  return {
    output: () => out,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

test("get pods -w prints the table, then a row per change with the columns kept as wide, until interrupted", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
  const w = await watch(h);
  await h.advance(13);
  expect(await w.stop()).toBe(0);
  // Exit at 1s and an immediate restart, exit at 2s shown through its 10s back-off, restart at 12s
  // (the CrashLoopBackOff of the pass at the wait's end is gone by the next read).
  expect(w.output()).toBe(
    [
      "NAME        READY   STATUS    RESTARTS   AGE",
      "crash-lab   1/1     Running   0          0s",
      "crash-lab   1/1     Running   1 (0s ago)   1s",
      // RESTARTS dates the last restart by its last termination: the exit at 1s while the one at 2s is the state.
      "crash-lab   0/1     Error     1 (1s ago)   2s",
      "crash-lab   1/1     Running   2 (10s ago)   12s",
      "",
    ].join("\n"),
  );
  h.agent.close();
});

test("get pods -w on an empty namespace prints the header with the first pod, and a removed pod's last row", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const w = await watch(h);
  expect(w.output()).toBe("");
  const web = pod({ name: "web", grace: 2, containers: [container("web")] });
  await h.kubelet.sync(desired(web));
  await h.advance(1);
  await h.kubelet.sync(desired());
  await h.advance(3);
  expect(await w.stop()).toBe(0);
  expect(w.output()).toBe(
    [
      "NAME      READY   STATUS    RESTARTS   AGE",
      "web-lab   1/1     Running   0          0s",
      // The deleted pod's last object, as kubectl prints a DELETED watch event: a pod gone for good
      // ends Succeeded or Failed (getPhase for a terminal pod), so it reads how it ended, not Terminating.
      "web-lab   0/1     Error     0          1s",
      "",
    ].join("\n"),
  );
  h.agent.close();
});

test("get pods -w -o name prints pod/NAME per change; -A adds the NAMESPACE column", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
  const named = await watch(h, { output: "name" });
  const all = await watch(h, { allNamespaces: true });
  await h.advance(1.5);
  await named.stop();
  await all.stop();
  expect(named.output()).toBe("pod/crash-lab\npod/crash-lab\n");
  expect(all.output().split("\n").slice(0, 3)).toEqual([
    "NAMESPACE   NAME        READY   STATUS    RESTARTS   AGE",
    "demo        crash-lab   1/1     Running   0          0s",
    "demo        crash-lab   1/1     Running   1 (0s ago)   1s",
  ]);
  h.agent.close();
});

test("get pods -w with -f is a usage error", async () => {
  await expect(getCommand("pods", undefined, { filename: "x.json", watch: true })).rejects.toThrow("--watch cannot be used with -f");
});
