/**
 * postStart and preStop's sleep with real processes: the container counts as started only once
 * its postStart exec has done its work, a failing hook kills and restarts it, a pod removed under
 * a hook that outlasts its grace is not held by it, and a preStop sleep delays SIGTERM.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { podStatus } from "../../src/kubelet/status/pod-status.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { waitFor } from "../e2e/helpers.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-hooks-"));
  h = realHarness(new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) }));
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sh = (name: string, script: string, extra = {}) => container(name, { command: ["sh", "-c", script], ...extra });

describe("lifecycle hooks with real processes", () => {
  test("postStart exec: the container is started only once the hook has done its work", async () => {
    const marker = join(root, "warm");
    const web = pod({ name: "warm", containers: [sh("web", "exec sleep 60", { postStart: { type: "exec", command: ["sh", "-c", `sleep 0.5; touch ${marker}`] } })] });
    const seen: { started: boolean; waiting?: string; hookDone: boolean }[] = [];
    const started = new Promise<void>((resolve) =>
      h.kubelet.onPodSynced((record) => {
        const status = podStatus(record, { runtimeName: "process" }).containerStatuses?.[0];
        if (!status) return;
        seen.push({ started: status.started === true, ...(status.state?.waiting?.reason && { waiting: status.state.waiting.reason }), hookDone: existsSync(marker) });
        if (status.started) resolve();
      }),
    );
    await h.kubelet.sync(desired(web));
    await Promise.race([started, h.event(() => false, 10_000, "started")]);
    expect(seen.some((s) => !s.started && s.waiting === "ContainerCreating" && !s.hookDone)).toBe(true);
    expect(seen.filter((s) => s.started && !s.hookDone)).toEqual([]);
    expect(h.events.some((e) => e.reason === "FailedPostStartHook")).toBe(false);
  });

  test("postStart exec failing: FailedPostStartHook, a Killing, the exit, and a restart", async () => {
    const web = pod({ name: "cold", grace: 2, containers: [sh("web", "exec sleep 60", { postStart: { type: "exec", command: ["sh", "-c", "echo cold; exit 3"] } })] });
    await h.kubelet.sync(desired(web));
    const failed = await h.event((e) => e.reason === "FailedPostStartHook");
    expect(failed).toMatchObject({ type: "Warning", message: "PostStartHook failed" });
    expect((await h.event((e) => e.reason === "Killing")).message).toBe("FailedPostStartHook");
    expect((await h.event((e) => e.reason === "Exited")).message).toBe("Container web exited with code 143 (Error)");
    await h.count((e) => e.reason === "Started", 2);
  });

  test("a pod removed under a postStart that outlasts its grace is gone within the grace", async () => {
    const web = pod({ name: "slow", grace: 1, containers: [sh("web", "exec sleep 60", { postStart: { type: "sleep", seconds: 30 } })] });
    await h.kubelet.sync(desired(web));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.sync(desired());
    // Removed while the 30 s hook still sleeps: the removal did not wait for it.
    await h.event((e) => e.reason === "PodRemoved", 20_000);
    // Ended by the SIGTERM (sleep exits on it), not by a SIGKILL once the grace ran out.
    expect(h.events.find((e) => e.reason === "Exited")!.message).toBe("Container web exited with code 143 (Error)");
    expect(h.events.some((e) => e.reason === "GraceExpired")).toBe(false);
  });

  test("a postStart exec that outlasts the grace does not hold the pod's removal, and is killed with it", async () => {
    const pidFile = join(root, "hook.pid");
    const web = pod({ name: "stuck", grace: 1, containers: [sh("web", "exec sleep 60", { postStart: { type: "exec", command: ["sh", "-c", `echo $$ > ${pidFile}; exec sleep 60`] } })] });
    await h.kubelet.sync(desired(web));
    for (let tries = 0; !existsSync(pidFile) || readFileSync(pidFile, "utf8").trim() === ""; tries++) {
      expect(tries).toBeLessThan(500);
      await Bun.sleep(10);
    }
    const hookPid = Number(readFileSync(pidFile, "utf8").trim());
    await h.kubelet.sync(desired());
    // Removed while the 60 s hook still runs: the removal did not wait for it, and it was killed.
    await h.event((e) => e.reason === "PodRemoved", 20_000);
    await waitFor(`the hook's process (pid ${hookPid}) killed`, () => !alive(hookPid), 20_000);
  });

  test("preStop sleep holds SIGTERM back for its seconds", async () => {
    const web = pod({ name: "linger", grace: 5, containers: [sh("web", "trap 'exit 0' TERM; while true; do sleep 0.05; done", { preStop: { type: "sleep", seconds: 1 } })] });
    await h.kubelet.sync(desired(web));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.sync(desired());
    const killing = await h.event((e) => e.reason === "Killing");
    const exited = await h.event((e) => e.reason === "Exited", 8000);
    expect(exited.message).toBe("Container web exited with code 0 (Completed)");
    // The TERM waited for the preStop's second; the trap then ended it (0), not a SIGKILL at the 5 s grace.
    expect(exited.at - killing.at).toBeGreaterThanOrEqual(1000);
    expect(h.events.some((e) => e.reason === "FailedPreStopHook" || e.reason === "GraceExpired")).toBe(false);
  });
});
