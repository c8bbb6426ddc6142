/**
 * The one rule for "is this recorded process still running" (host/process-liveness.ts), which the
 * process runtime, the docker node lock, the agent lock and the API's socket directory all use.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { isLiveProcess, parseStartTicks, processStartTicks, recordedStartTicks } from "../../src/host/process-liveness.ts";

const children: Bun.Subprocess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2)[0];
  } catch {
    return undefined;
  }
}

test("a live process is live with its own start ticks or none, and not with another's", () => {
  const ticks = processStartTicks(process.pid);
  expect(ticks).toMatch(/^\d+$/);
  expect(isLiveProcess(process.pid, ticks)).toBe(true);
  expect(isLiveProcess(process.pid, undefined)).toBe(true);
  expect(isLiveProcess(process.pid, `${ticks}0`)).toBe(false);
});

test("no process, or no pid at all, is not live", () => {
  for (const pid of [0, -1, 1.5, Number.NaN, 2 ** 22 + 1]) {
    expect(isLiveProcess(pid, undefined)).toBe(false);
    expect(processStartTicks(pid)).toBeUndefined();
  }
});

test("a zombie (exited, not reaped by its parent) is not live, though its stat and start ticks remain", async () => {
  // sh prints the pid of a child that exits at once, then becomes `sleep`, which never reaps it.
  const parent = Bun.spawn(["sh", "-c", "sleep 0 & echo $!; exec sleep 30"], { stdout: "pipe" });
  children.push(parent);
  const reader = parent.stdout.getReader();
  const { value } = await reader.read();
  const zombie = Number(new TextDecoder().decode(value).trim());
  for (let i = 0; i < 200 && stateOf(zombie) !== "Z"; i++) await Bun.sleep(10);
  expect(stateOf(zombie)).toBe("Z");
  const ticks = processStartTicks(zombie);
  expect(ticks).toMatch(/^\d+$/);
  expect(isLiveProcess(zombie, ticks)).toBe(false);
  expect(isLiveProcess(zombie, undefined)).toBe(false);
});

test("records spell unreadable ticks `-`, which reads back as none", () => {
  expect(existsSync("/proc/self/stat")).toBe(true);
  expect(recordedStartTicks(process.pid)).toBe(processStartTicks(process.pid)!);
  expect(recordedStartTicks(2 ** 22 + 1)).toBe("-");
  expect(parseStartTicks("-")).toBeUndefined();
  expect(parseStartTicks(undefined)).toBeUndefined();
  expect(parseStartTicks("")).toBeUndefined();
  expect(parseStartTicks("12345")).toBe("12345");
});
