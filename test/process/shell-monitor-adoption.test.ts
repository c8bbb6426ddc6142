/**
 * An upgrade from a version whose monitor was /bin/sh (test/fixtures/shell-monitor.sh is that
 * script, as the last such version wrote it): containers it started keep running under it, and the
 * new runtime adopts them, reads their raw `log`, signals them and records how they ended.
 * The old runtime is stood in for by a launcher that turns the new monitor's command line into the
 * old one's, so the container directory, labels and cgroups are what the runtime makes.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import { realClock } from "../../src/clock.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

const SHELL_MONITOR = resolve(import.meta.dir, "../fixtures/shell-monitor.sh");
const cgroups = testCgroupIdentities();
const roots: string[] = [];
const open: ProcessRuntime[] = [];
afterEach(async () => {
  for (const runtime of open.splice(0)) await runtime.close();
});
afterAll(async () => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  await cgroups.cleanup();
});

/**
 * `launcher MONITOR --dir D --events E --id I ... -- CMD...` -> the shell monitor's
 * `monitor.sh monitor D E I SETSID DATE MV LOGSPEC CGROUPS -- CMD...`, with the raw `log` it wrote.
 */
function shellMonitorLauncher(root: string): string {
  const which = (tool: string) => Bun.which(tool) ?? `/usr/bin/${tool}`;
  const logSpec = ["1048576", "5", "stdbuf", "head", "wc", "ln", "rm", "gzip", "sleep", "dd"].map((tool, i) => (i < 2 ? tool : which(tool))).join(" ");
  const launcher = join(root, "shell-monitor-launcher");
  writeFileSync(
    launcher,
    `#!/bin/sh
shift
cgroups=-
while [ "$1" != -- ]; do
  case $1 in
    --dir) dir=$2 ;;
    --events) events=$2 ;;
    --id) id=$2 ;;
    --cgroup-join) if [ "$cgroups" = - ]; then cgroups=$2; else cgroups=$cgroups:$2; fi ;;
    # What the shell monitor never did: the binds, the root read-only, no_new_privs.
    --bind | --bind-ro) shift ;;
    --read-only-root | --no-new-privs) shift; continue ;;
  esac
  shift 2
done
shift
rm -f "$dir/container.log"
: >"$dir/log"
exec /bin/sh ${SHELL_MONITOR} monitor "$dir" "$events" "$id" ${which("setsid")} ${which("date")} ${which("mv")} "${logSpec}" "$cgroups" -- "$@"
`,
  );
  chmodSync(launcher, 0o755);
  return launcher;
}

async function logsOf(path: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  const attempt: AttemptRow = { podUid: "u", container: "main", attempt: 0, runtimeId: "r", startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath: path };
  // Not followed: the store is never asked whether the attempt ended.
  await writeAttemptLogs(attempt, {}, { store: {} as StoreReader, clock: realClock, signal: new AbortController().signal }, (bytes) => void chunks.push(bytes));
  return Buffer.concat(chunks).toString();
}

test("a container the shell monitor of an earlier version started is adopted, read, stopped and recorded by the new runtime", async () => {
  const root = mkdtempSync(join(tmpdir(), "minikubelet-shell-adopt-"));
  roots.push(root);
  const rootDir = join(root, "process");
  const old = new ProcessRuntime({ rootDir, owner: cgroups.ownerFor(root), monitorTools: { launcher: shellMonitorLauncher(root) } });
  open.push(old);
  // The line is said once the trap is set: the SIGTERM that follows it must find the trap.
  const container = contractContainer("main", ["sh", "-c", "trap 'echo stopping; exit 7' TERM; echo before upgrade; sleep 30 & wait"]);
  const pod = contractPod("legacy", [container]);
  const sandbox = await old.runPodSandbox(pod);
  const id = await old.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  const dir = join(rootDir, "pods", pod.uid, "containers", id);
  expect(existsSync(join(dir, "log"))).toBe(true);
  expect(readFileSync(`/proc/${Number(readFileSync(join(dir, "pid"), "utf8").split(" ")[3])}/cmdline`, "utf8")).toContain("shell-monitor.sh");
  await old.close();

  const upgraded = new ProcessRuntime({ rootDir, owner: cgroups.ownerFor(root) });
  open.push(upgraded);
  const [listed] = await upgraded.listContainers();
  expect(listed).toMatchObject({ id, state: "running" });
  expect(listed!.logPath).toBe(join(dir, "log"));
  for (let i = 0; i < 200 && !(await logsOf(listed!.logPath!)).includes("before upgrade"); i++) await Bun.sleep(10);
  expect(await logsOf(listed!.logPath!)).toBe("before upgrade\n");

  await upgraded.killContainer(id, "SIGTERM");
  const exited = await waitForStatus(upgraded, id, (status) => status.state === "exited", 5000);
  expect(exited.exitCode).toBe(7);
  expect(await logsOf(listed!.logPath!)).toBe("before upgrade\nstopping\n");
  await upgraded.removeContainer(id);
  expect(existsSync(dir)).toBe(false);
});
