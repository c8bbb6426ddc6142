/**
 * The fast subset of the upstream node conformance tests, as the suite runs it: scripts/conformance
 * --fast (the [sig-node] Pods, Probing container, InitContainer, Container Lifecycle Hook and
 * Downward API [NodeConformance] specs without the [Slow] ones) against a minikubelet node on the
 * docker runtime, joined to a control plane of the script's own. Every spec the selection names
 * must pass: the count is asked of e2e.test itself (--dry-run), so a spec that skips itself or
 * drops out of the report fails this test as surely as one that fails.
 */
import { expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describeDocker } from "../docker/helpers.ts";

const ROOT = resolve(import.meta.dir, "../..");
const SCRIPT = join(ROOT, "scripts/conformance");
/** The specs wait on pods: the probe specs watch a container for minutes. About 15 minutes here. */
const RUN_LIMIT_MS = 45 * 60_000;
/** scripts/test stops a test process silent for 3 minutes; all four ginkgo processes can be inside long specs that long. */
const HEARTBEAT_MS = 60_000;

/** The specs `--fast` selects, as e2e.test's dry run lists them. */
function selectedSpecs(state: string): string[] {
  const run = spawnSync(SCRIPT, ["--fast", "--dry-run"], { cwd: ROOT, env: { ...process.env, MINIKUBELET_CONFORMANCE_DIR: state }, encoding: "utf8", maxBuffer: 16 << 20 });
  if (run.status !== 0) throw new Error(`scripts/conformance --fast --dry-run: exit ${run.status}\n${run.stderr}`);
  return run.stdout.split("\n").filter((line) => line.startsWith("[sig-"));
}

/** Runs the script, its output on stderr as it comes; resolves with its exit code and last line. */
function runConformance(state: string, report: string): Promise<{ code: number | null; summary: string }> {
  return new Promise((done, failed) => {
    const started = Date.now();
    const child = spawn(SCRIPT, ["--fast", "--report-dir", report], { cwd: ROOT, env: { ...process.env, MINIKUBELET_CONFORMANCE_DIR: state }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      process.stderr.write(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    const heartbeat = setInterval(() => console.error(`conformance --fast: ${Math.round((Date.now() - started) / 1000)}s`), HEARTBEAT_MS);
    child.on("error", failed);
    child.on("close", (code) => {
      clearInterval(heartbeat);
      done({ code, summary: stdout.trim().split("\n").at(-1) ?? "" });
    });
  });
}

describeDocker(
  "node conformance: the fast subset",
  () => {
    test(
      "every spec of scripts/conformance --fast passes on a docker-runtime node",
      async () => {
        const state = mkdtempSync(join(tmpdir(), "minikubelet-conformance-fast-"));
        const report = join(state, "report");
        const specs = selectedSpecs(state);
        expect(specs.length).toBeGreaterThan(0);
        const { code, summary } = await runConformance(state, report);
        const failures = existsSync(join(report, "failures.txt")) ? readFileSync(join(report, "failures.txt"), "utf8") : "(no failures.txt)";
        // A failed run's report (ginkgo.log has each failed spec's timeline, the agent's log beside it) is kept.
        if (code !== 0) console.error(`conformance --fast: the report is in ${report}`);
        expect({ summary, code, failures }).toEqual({ summary: `${specs.length} passed, 0 failed, 0 skipped`, code: 0, failures: "" });
        rmSync(state, { recursive: true, force: true });
      },
      RUN_LIMIT_MS,
    );
  },
  { registry: true },
);
