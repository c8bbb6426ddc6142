/**
 * For the tests that drive the compiled monitor directly: the binary (built once per file by
 * monitor/build), temp dirs removed after the file, and pids killed after each test.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "..");
const arch = process.arch === "arm64" ? "arm64" : "x64";

export interface MonitorFixtures {
  binary: string;
  /** A new directory under the system's temp dir, removed after the file. */
  tempDir(): string;
  /** Every pid a test started or learnt of (monitors, containers, strays): all get SIGKILL after it. */
  started: number[];
}

/** Registers the file's hooks; `prefix` names its temp dirs (short: a unix socket's path is at most 107 bytes). */
export function monitorFixtures(prefix: string): MonitorFixtures {
  beforeAll(() => {
    const built = Bun.spawnSync([join(repo, "monitor", "build"), arch], { stderr: "pipe", stdout: "pipe" });
    if (built.exitCode !== 0) throw new Error(`monitor/build ${arch} failed (${built.exitCode}): ${built.stderr.toString()}`);
  });
  const temps: string[] = [];
  afterAll(() => {
    for (const dir of temps) rmSync(dir, { recursive: true, force: true });
  });
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });
  return {
    binary: join(repo, "monitor", "out", `minikubelet-monitor-${arch}`),
    tempDir() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      temps.push(dir);
      return dir;
    },
    started,
  };
}

/** Polls until `condition` holds; real processes, so real time, bounded. */
export async function until(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** The file's text, or undefined while it is not there. */
export function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
