/**
 * Where the container monitor (monitor/minikubelet-monitor.c, minikubelet's conmon) comes from and
 * where it runs from. A release binary carries the monitor for its own architecture as an embedded
 * file (scripts/build adds it to the bundle); run from source, it is the one `monitor/build` makes
 * in monitor/out/, built first when it is missing or older than its source.
 *
 * Each runtime root gets a copy named by its content (`minikubelet-monitor-<sha256 prefix>`), written
 * whole and renamed into place: running monitors keep executing the file they started from, an
 * upgrade adds a new name instead of rewriting a file in use (ETXTBSY), and two agents of one version
 * share one copy. Older copies stay while a monitor may still run from them; they are kilobytes.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The file name every copy starts with; ProcessMonitor's /proc scan knows a monitor by it. */
export const MONITOR_NAME = "minikubelet-monitor";

/** The monitor's architecture names, as monitor/build takes them. */
function monitorArch(): "x64" | "arm64" {
  if (process.arch === "x64" || process.arch === "arm64") return process.arch;
  throw new Error(`process runtime: no container monitor is built for ${process.arch}`);
}

/** The monitor's bytes: embedded in a compiled binary, else built from the source tree. */
function monitorBytes(): Uint8Array {
  const embedded = Bun.embeddedFiles.find((file) => (file as Blob & { name?: string }).name?.startsWith(`${MONITOR_NAME}-`));
  if (embedded) return new Uint8Array(readEmbedded(embedded));
  return readFileSync(sourceTreeMonitor());
}

/** Bun's embedded files are Blobs whose bytes are in memory already; this reads them synchronously. */
function readEmbedded(file: Blob): ArrayBuffer {
  const name = (file as Blob & { name?: string }).name!;
  // An embedded file is also readable by path under the binary's virtual root.
  return readFileSync(join("/$bunfs/root", name)).buffer as ArrayBuffer;
}

let built: string | undefined;

/** monitor/out/minikubelet-monitor-<arch>, (re)built by monitor/build when stale; once per process. */
function sourceTreeMonitor(): string {
  if (built) return built;
  const root = resolve(import.meta.dir, "../../..");
  const build = join(root, "monitor", "build");
  if (!existsSync(build)) throw new Error("process runtime: this build carries no container monitor, and there is no monitor/build to make one");
  const result = Bun.spawnSync([build, monitorArch()], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const output = join(root, "monitor", "out", `${MONITOR_NAME}-${monitorArch()}`);
  if (result.exitCode !== 0 || !existsSync(output)) {
    throw new Error(`process runtime: monitor/build ${monitorArch()} failed (exit ${result.exitCode}): ${result.stderr.toString().trim()}`);
  }
  built = output;
  return output;
}

/** Puts this version's monitor under `rootDir` (if it is not there yet) and returns its path. */
export function installMonitorBinary(rootDir: string): string {
  const bytes = monitorBytes();
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const path = join(rootDir, `${MONITOR_NAME}-${digest}`);
  if (existsSync(path) && statSync(path).size === bytes.length) return path;
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, bytes, { mode: 0o700 });
    chmodSync(tmp, 0o700);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new Error(`process runtime: cannot write the container monitor to ${path}: ${(error as Error).message}`, { cause: error });
  }
  return path;
}
