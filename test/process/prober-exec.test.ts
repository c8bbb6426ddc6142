/**
 * exec probes through the process runtime's execSync: real commands beside a real container, the
 * prober's verdict in the kubelet's words, and a command past its timeout killed with all it started.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { Probe } from "../../src/manifest/types.ts";
import { Prober, type ProbeResult } from "../../src/prober/prober.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import type { ExecResult } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { contractContainer, contractPod } from "../runtime-contract.ts";
import { waitFor } from "../e2e/helpers.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let runtime: ProcessRuntime;
let containerId: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mk-prober-exec-"));
  runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  const main = contractContainer("main", ["sleep", "60"]);
  const pod = contractPod("probed", [main]);
  const sandbox = await runtime.runPodSandbox(pod);
  containerId = await runtime.startContainer({ pod, container: main, kind: "app", attempt: 0, sandbox });
});

afterEach(async () => {
  await runtime.removeContainer(containerId);
  await runtime.close();
  rmSync(root, { recursive: true, force: true });
});

/** Whether `pid` is a process that has not ended (a zombie waiting for its reaper has). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
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

const target = () => ({ containerId, podIP: "127.0.0.1", kind: "liveness" as const });

describe("exec probes through the process runtime", () => {
  test("exit 0 succeeds, with the command's output", async () => {
    const prober = new Prober({ clock: realClock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) });
    expect(await prober.probe(execProbe(["sh", "-c", "echo healthy"]), target())).toEqual({ ok: true, message: "healthy" });
  });

  test("a non-zero exit fails with stdout and stderr", async () => {
    const prober = new Prober({ clock: realClock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) });
    const result = await prober.probe(execProbe(["sh", "-c", "echo checking; cat /nonexistent/healthy; exit 3"]), target());
    expect(result.ok).toBe(false);
    expect(result.message).toContain("checking");
    expect(result.message).toContain("/nonexistent/healthy");
  });

  test("a command past its timeout fails in the kubelet's words, and the runtime kills it with what it started", async () => {
    const pidFile = join(root, "sleeper.pid");
    // The sleep is the shell's child: only a kill of the whole command reaches it.
    const command = ["sh", "-c", `sleep 30 & echo $! > ${pidFile}; wait`];
    const calls: Promise<ExecResult>[] = [];
    const prober = new Prober({
      clock: realClock,
      exec: (id, argv, timeoutMs) => {
        const call = runtime.execSync(id, argv, timeoutMs);
        calls.push(call);
        return call;
      },
    });
    const result = await prober.probe(execProbe(command, 0.2), target());
    expect(result).toEqual({ ok: false, message: `command "${command.join(" ")}" timed out` });
    expect(await calls[0]).toMatchObject({ timedOut: true });
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    // Its kill is sent before execSync resolves; the kernel ends it at once, well inside its 30 s.
    await waitFor(`the command's sleep (pid ${sleeper}) ended`, () => !running(sleeper), 10_000);
  });

  test("when the exec call itself hangs, the prober's clock still ends the probe", async () => {
    const clock = new FakeClock();
    // A runtime whose exec call never answers: only the prober's own clock can end the probe.
    const prober = new Prober({ clock, exec: () => new Promise<ExecResult>(() => {}) });
    let hung: ProbeResult | undefined;
    const pending = prober.probe(execProbe(["sleep", "30"], 3), target()).then((r) => (hung = r));

    // Another container's probe runs and answers while the first one hangs.
    const quick = await new Prober({ clock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }).probe(execProbe(["true"]), target());
    expect(quick).toEqual({ ok: true, message: "" });
    expect(hung).toBeUndefined();

    clock.step(3000);
    await pending;
    expect(hung).toEqual({ ok: false, message: 'command "sleep 30" timed out' });
  });
});
