/**
 * exec probes through real child processes: a tiny Bun.spawn-based stand-in for a runtime's
 * execSync (combined output, killed at the timeout), not a runtime.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { realClock } from "../../src/clock.ts";
import type { Probe } from "../../src/manifest/types.ts";
import { Prober, type ExecFn, type ProbeResult } from "../../src/prober/prober.ts";
import type { ExecResult } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";

const children = new Set<number>();

afterAll(() => {
  for (const pid of children) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `command` as a child of the test. With `killAtTimeout` false it plays a runtime whose
 * exec call hangs, so only the prober's own clock can end the probe.
 */
function spawnExec(killAtTimeout = true) {
  const pids: number[] = [];
  const calls: Array<Promise<ExecResult>> = [];
  const exec: ExecFn = (containerId, command, timeoutMs) => {
    const call = run(containerId, command, timeoutMs);
    calls.push(call);
    return call;
  };
  const run = async (_containerId: string, command: string[], timeoutMs: number): Promise<ExecResult> => {
    // Its own process group, so the kill reaches `sleep` under `sh -c` (which holds the pipes).
    const child = Bun.spawn(command, { stdout: "pipe", stderr: "pipe", detached: true });
    pids.push(child.pid);
    children.add(child.pid);
    let timedOut = false;
    const cancel = killAtTimeout
      ? realClock.setTimeout(() => {
          timedOut = true;
          process.kill(-child.pid, "SIGKILL");
        }, timeoutMs)
      : () => {};
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    cancel();
    children.delete(child.pid);
    return { exitCode, output: stdout + stderr, timedOut };
  };
  return { exec, pids, calls };
}

function execProbe(command: string[], timeoutSeconds = 1): Probe {
  return {
    handler: { type: "exec", command },
    initialDelaySeconds: 0,
    timeoutSeconds,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  };
}

const target = { containerId: "c1", podIP: "127.0.0.1", kind: "liveness" as const };

describe("exec probes through real processes", () => {
  test("exit 0 succeeds", async () => {
    const prober = new Prober({ clock: realClock, exec: spawnExec().exec });
    expect(await prober.probe(execProbe(["sh", "-c", "echo healthy"]), target)).toEqual({ ok: true, message: "healthy" });
  });

  test("a non-zero exit fails with stdout and stderr", async () => {
    const prober = new Prober({ clock: realClock, exec: spawnExec().exec });
    const result = await prober.probe(execProbe(["sh", "-c", "cat /nonexistent/healthy; exit 3"]), target);
    expect(result.ok).toBe(false);
    expect(result.message).toContain("/nonexistent/healthy");
  });

  test("a command past its timeout is killed and fails in the kubelet's words (real clock, 200 ms)", async () => {
    const { exec, pids, calls } = spawnExec();
    const prober = new Prober({ clock: realClock, exec });
    const result = await prober.probe(execProbe(["sh", "-c", "sleep 5"], 0.2), target);
    expect(result).toEqual({ ok: false, message: 'command "sh -c sleep 5" timed out' });
    // The prober's timer and the runtime's kill race; the runtime's call ends with the kill.
    expect(await calls[0]).toMatchObject({ timedOut: true });
    expect(pids.length).toBe(1);
    expect(alive(pids[0] ?? 0)).toBe(false);
  });

  test("when the exec call itself hangs, the prober's clock still ends the probe", async () => {
    const clock = new FakeClock();
    const { exec, pids } = spawnExec(false);
    const prober = new Prober({ clock, exec });
    let hung: ProbeResult | undefined;
    const pending = prober.probe(execProbe(["sleep", "30"], 3), target).then((r) => (hung = r));

    // Another container's probe runs and answers while the first one hangs.
    const quick = await new Prober({ clock, exec: spawnExec().exec }).probe(execProbe(["true"]), target);
    expect(quick).toEqual({ ok: true, message: "" });
    expect(hung).toBeUndefined();

    clock.step(3000);
    await pending;
    expect(hung).toEqual({ ok: false, message: 'command "sleep 30" timed out' });
    for (const pid of pids) process.kill(-pid, "SIGKILL");
  });
});
