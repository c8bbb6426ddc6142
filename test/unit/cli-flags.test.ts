import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCLI } from "../../src/cli/cli.ts";

let out: string[];
let spies: ReturnType<typeof spyOn>[];
let dir: string;

beforeEach(() => {
  out = [];
  const capture = (chunk: unknown) => (out.push(String(chunk)), true);
  spies = [spyOn(process.stdout, "write").mockImplementation(capture as never), spyOn(process.stderr, "write").mockImplementation(capture as never)];
  dir = mkdtempSync(join(tmpdir(), "minikubelet-flags-"));
  mkdirSync(join(dir, "manifests"));
});

afterEach(() => {
  for (const spy of spies) spy.mockRestore();
  rmSync(dir, { recursive: true, force: true });
});

describe("flags checked before the agent starts", () => {
  test("run --node is checked like validate --node, before the database or the runtime is touched", async () => {
    const db = join(dir, "state.db");
    const code = await runCLI(["run", "--manifests", join(dir, "manifests"), "--node", "Lab_1", "--db", db]);
    const validate = [...out];
    out.length = 0;
    expect(await runCLI(["validate", join(dir, "manifests"), "--node", "Lab_1"])).toBe(code);
    expect(code).toBe(2);
    expect(validate.join("")).toStartWith("error: --node: ");
    expect(validate.join("")).toBe(out.join(""));
    expect(existsSync(db)).toBe(false);
    expect(existsSync(join(dir, "process"))).toBe(false);
  });

  test.each([
    [["backoff", "--backoff-base", "20", "--backoff-max", "10"]],
    [["run", "--manifests", "MANIFESTS", "--backoff-base", "20", "--backoff-max", "10", "--db", "DB"]],
  ])("a back-off base above the cap is a usage error naming both flags and values: %p", async (argv) => {
    const db = join(dir, "state.db");
    const args = argv.map((a) => (a === "MANIFESTS" ? join(dir, "manifests") : a === "DB" ? db : a));
    expect(await runCLI(args)).toBe(2);
    expect(out.join("")).toBe("error: --backoff-base (20s) must not be above --backoff-max (10s)\n");
    expect(existsSync(db)).toBe(false);
  });

  test.each([["0"], ["1.5"], ["lots"], ["-2"]])("run --pod-max-pids=%p is a usage error before anything starts", async (value) => {
    const db = join(dir, "state.db");
    expect(await runCLI(["run", "--manifests", join(dir, "manifests"), `--pod-max-pids=${value}`, "--db", db])).toBe(2);
    expect(out.join("")).toStartWith("error: --pod-max-pids must be a whole number above 0, or -1 for no limit");
    expect(existsSync(db)).toBe(false);
  });

  test.each([
    ["--event-ttl=0", "error: --event-ttl must be a duration above 0, such as 24h or 90m (got 0)\n"],
    ["--event-ttl=24", "error: --event-ttl must be a duration above 0, such as 24h or 90m (got 24)\n"],
    ["--event-ttl=soon", "error: --event-ttl must be a duration above 0, such as 24h or 90m (got \"soon\")\n"],
    ["--max-events-per-pod=0", "error: --max-events-per-pod must be a whole number above 0 (got 0)\n"],
    ["--max-events-per-pod=many", "error: --max-events-per-pod must be a whole number above 0 (got \"many\")\n"],
    ["--housekeeping-interval=10", "error: --housekeeping-interval must be a duration of at least 100ms, such as 10s (got 10)\n"],
    ["--housekeeping-interval=50ms", "error: --housekeeping-interval must be a duration of at least 100ms, such as 10s (got \"50ms\")\n"],
  ])("run %s is a usage error before anything starts", async (flag, message) => {
    const db = join(dir, "state.db");
    expect(await runCLI(["run", "--manifests", join(dir, "manifests"), flag, "--db", db])).toBe(2);
    expect(out.join("")).toBe(message);
    expect(existsSync(db)).toBe(false);
  });

  test.each([
    ["--eviction-hard", "imagefs.available<15%", "error: --eviction-hard: unsupported eviction signal imagefs.available (this agent watches memory.available and nodefs.available)\n"],
    ["--eviction-hard", "nodefs.available<110%", "error: --eviction-hard: eviction percentage threshold nodefs.available must be <= 100%: 110%\n"],
    ["--system-reserved", "gpu=1", "error: --system-reserved: gpu cannot be reserved (only cpu, memory, ephemeral-storage)\n"],
    ["--kube-reserved", "memory=-1", "error: --kube-reserved: memory=-1: must be greater than or equal to 0\n"],
  ])("run %s %p is a usage error before anything starts", async (flag, value, message) => {
    const db = join(dir, "state.db");
    expect(await runCLI(["run", "--manifests", join(dir, "manifests"), flag, value, "--db", db])).toBe(2);
    expect(out.join("")).toBe(message);
    expect(existsSync(db)).toBe(false);
  });

  test.each([["0"], ["1.5"], ["lots"], ["-1"]])("run --max-pods=%p is a usage error before anything starts", async (value) => {
    const db = join(dir, "state.db");
    expect(await runCLI(["run", "--manifests", join(dir, "manifests"), `--max-pods=${value}`, "--db", db])).toBe(2);
    expect(out.join("")).toStartWith("error: --max-pods must be a whole number above 0");
    expect(existsSync(db)).toBe(false);
  });

  test("--backoff-max alone below the default base lowers the first wait instead of being refused", async () => {
    expect(await runCLI(["backoff", "--backoff-max", "4"])).toBe(0);
    const waits = out.join("").split("\n").slice(1, 4).map((line) => line.trim().split(/\s+/)[1]);
    expect(waits).toEqual(["0s", "4s", "4s"]);
  });

  test("a base equal to the cap is fine", async () => {
    expect(await runCLI(["backoff", "--backoff-base", "5", "--backoff-max", "5"])).toBe(0);
    expect(out.join("")).toContain("5s");
  });
});
