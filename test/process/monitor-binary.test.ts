/**
 * The compiled container monitor (monitor/minikubelet-monitor.c), run directly with no agent: the
 * files it records (pid, .ended, exit, the markers) as process-files.ts reads them, the group kill
 * and the bounded drain at the end, the CRI log records, rotation with no line lost or repeated,
 * and a full disk that neither stops the container nor loses the fact that output was dropped.
 */
import { monitorFixtures, read, until } from "../monitor-fixtures.ts";
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { mountSmallFilesystem, type SmallFilesystem } from "../small-filesystem.ts";

const { binary, tempDir, started } = monitorFixtures("minikubelet-monitor-bin-");

interface Run {
  root: string;
  dir: string;
  events: string;
  log: string;
  monitor: ReturnType<typeof Bun.spawn>;
}

interface RunOptions {
  maxBytes?: number;
  maxFiles?: number;
  drainMs?: number;
  gzip?: string;
  extra?: string[];
  root?: string;
  env?: Record<string, string>;
}

/** Starts the monitor as the agent does: detached, stdio on /dev/null, in the container's cwd. */
function runMonitor(command: string[], options: RunOptions = {}): Run {
  const root = options.root ?? tempDir();
  const dir = join(root, "c");
  const events = join(root, "events");
  mkdirSync(dir, { recursive: true });
  mkdirSync(events, { recursive: true });
  const log = join(dir, "log");
  const args = [binary, "--dir", dir, "--events", events, "--id", "c1", "--log", log];
  args.push("--log-max-bytes", String(options.maxBytes ?? 10 << 20), "--log-max-files", String(options.maxFiles ?? 5));
  if (options.drainMs !== undefined) args.push("--drain-ms", String(options.drainMs));
  if (options.gzip) args.push("--gzip", options.gzip);
  args.push(...(options.extra ?? []), "--", ...command);
  const monitor = Bun.spawn(args, { cwd: root, detached: true, stdio: ["ignore", "ignore", "ignore"], env: options.env ?? { PATH: "/usr/bin:/bin", HOME: root } });
  started.push(monitor.pid);
  return { root, dir, events, log, monitor };
}

/** The pid file's fields, once it is there. */
async function pidOf(run: Run): Promise<{ pid: number; ticks: string; monitorPid: number; monitorTicks: string }> {
  await until("the pid file", () => (read(join(run.dir, "pid")) ?? "").endsWith("\n"));
  const text = read(join(run.dir, "pid"))!;
  expect(text).toMatch(/^\d+ \d+ - \d+ \d+\n$/);
  const [pid, ticks, , monitorPid, monitorTicks] = text.trim().split(" ") as [string, string, string, string, string];
  started.push(Number(pid));
  return { pid: Number(pid), ticks, monitorPid: Number(monitorPid), monitorTicks };
}

/** /proc/<pid>/stat fields from 3 on (state first): index 2 is the group, 3 the session, 19 the start time. */
function statOf(pid: number): string[] | undefined {
  const text = read(`/proc/${pid}/stat`);
  return text?.slice(text.lastIndexOf(") ") + 2).split(" ");
}

function alive(pid: number): boolean {
  const state = statOf(pid)?.[0];
  return state !== undefined && state !== "Z" && state !== "X";
}

/** Waits for `exit` and the exited marker, and for the monitor's own exit (0). */
async function exitOf(run: Run, timeoutMs = 5000): Promise<string> {
  await until("the exit file", () => (read(join(run.dir, "exit")) ?? "").endsWith("\n") && existsSync(join(run.events, "c1.exited")), timeoutMs);
  expect(await run.monitor.exited).toBe(0);
  return read(join(run.dir, "exit"))!;
}

interface LogRecord {
  time: string;
  stream: string;
  tag: string;
  content: string;
}

const RECORD = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (stdout|stderr) ([FP]) (.*)$/s;

function records(text: string): LogRecord[] {
  if (text === "") return [];
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => {
      const match = RECORD.exec(line);
      if (!match) throw new Error(`not a CRI log record: ${JSON.stringify(line.slice(0, 120))}`);
      return { time: match[1]!, stream: match[2]!, tag: match[3]!, content: match[4]! };
    });
}

test("the pid file names the container's own process, which leads its session; markers and exit follow, 0600", async () => {
  const cgroupJoin = join(tempDir(), "tasks");
  writeFileSync(cgroupJoin, "");
  const run = runMonitor(["sh", "-c", "while [ ! -e go ]; do sleep 0.01; done; umask; exit 3"], { extra: ["--cgroup-join", cgroupJoin] });
  const { pid, ticks, monitorPid, monitorTicks } = await pidOf(run);
  expect(monitorPid).toBe(run.monitor.pid);
  expect(statOf(monitorPid)?.[19]).toBe(monitorTicks);
  const stat = statOf(pid)!;
  expect(stat[19]).toBe(ticks);
  expect(stat[2]).toBe(String(pid));
  expect(stat[3]).toBe(String(pid));
  // `0`, the writer itself: the kernel moves the writing thread without its global threadgroup lock.
  expect(read(cgroupJoin)).toBe("0\n");
  expect(existsSync(join(run.events, "c1.started"))).toBe(true);
  expect(existsSync(join(run.dir, "exit"))).toBe(false);
  expect(existsSync(join(run.dir, ".ended"))).toBe(false);

  // While a container runs, the monitor's own memory (its proportional share) stays tiny.
  const pss = Number(/^Pss:\s+(\d+) kB/m.exec(read(`/proc/${monitorPid}/smaps_rollup`)!)![1]);
  expect(pss).toBeLessThanOrEqual(100);

  writeFileSync(join(run.root, "go"), "");
  expect(await exitOf(run)).toBe("3 -\n");
  expect(read(join(run.dir, ".ended"))).toBe("3 -\n");
  // The container got the umask the monitor was started with, not the monitor's own 077.
  const umask = `0${(process.umask() & 0o777).toString(8).padStart(3, "0")}`;
  expect(records(read(run.log)!).map((r) => r.content)).toEqual([umask]);
  for (const file of ["pid", ".ended", "exit", "log", "monitor.err"]) expect(statSync(join(run.dir, file)).mode & 0o777).toBe(0o600);
  for (const marker of ["c1.started", "c1.exited"]) expect(statSync(join(run.events, marker)).mode & 0o777).toBe(0o600);
});

test("a signal's exit is 128+n, and a command not found is 127", async () => {
  const killed = runMonitor(["sh", "-c", "kill -TERM $$"]);
  const missing = runMonitor(["no-such-command-here"]);
  expect(await exitOf(killed)).toBe("143 -\n");
  expect(await exitOf(missing)).toBe("127 -\n");
  expect(read(join(missing.dir, "monitor.err"))).toContain("no-such-command-here");
});

test("the command is looked up on the container's PATH; one found but not executable is 126", async () => {
  const root = tempDir();
  mkdirSync(join(root, "bin"));
  writeFileSync(join(root, "bin", "hello"), "#!/bin/sh\necho from-path \"$GREETING\"\n", { mode: 0o755 });
  writeFileSync(join(root, "bin", "not-executable"), "#!/bin/sh\n", { mode: 0o644 });
  const env = { PATH: `${join(root, "bin")}:/usr/bin:/bin`, GREETING: "hi" };
  const found = runMonitor(["hello"], { root, env });
  expect(await exitOf(found)).toBe("0 -\n");
  expect(records(read(found.log)!).map((r) => r.content)).toEqual(["from-path hi"]);
  const refused = runMonitor(["not-executable"], { root: tempDir(), env });
  expect(await exitOf(refused)).toBe("126 -\n");
});

test("the container starts with no signal ignored or blocked (the monitor ignores SIGPIPE and blocks SIGCHLD)", async () => {
  const run = runMonitor(["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"]);
  expect(await exitOf(run)).toBe("0 -\n");
  expect(records(read(run.log)!).map((r) => r.content.replace(/\s+/, " "))).toEqual(["SigBlk: 0000000000000000", "SigIgn: 0000000000000000"]);
});

test("options are checked: an unknown one, a missing one or no command is exit 2 with a message", () => {
  const dir = tempDir();
  const cases = [
    ["--dir", dir, "--bogus", "1", "--", "true"],
    ["--dir", dir, "--events", dir, "--id", "x", "--log", join(dir, "log"), "--log-max-bytes", "100", "--", "true"],
    ["--dir", dir, "--events", dir, "--id", "x", "--log", join(dir, "log"), "--log-max-bytes", "100", "--log-max-files", "2"],
    ["--dir", dir, "--events", dir, "--id", "x", "--log", join(dir, "log"), "--log-max-bytes", "x", "--log-max-files", "2", "--", "true"],
    // An exec's starter needs the directory; an identity is numbers (uid -1 would be "unchanged" to the kernel).
    ["--enter", "1", "--", "true"],
    ["--enter", "1", "--wd", "/", "--user", "nobody", "--", "true"],
    ["--enter", "1", "--wd", "/", "--user", "4294967295", "--", "true"],
    ["--enter", "1", "--wd", "/", "--groups", "5,,6", "--", "true"],
    ["--enter", "1", "--wd", "/", "--capabilities", "-1", "--", "true"],
  ];
  for (const args of cases) {
    const result = Bun.spawnSync([binary, ...args], { stderr: "pipe" });
    expect({ args, code: result.exitCode }).toEqual({ args, code: 2 });
    expect(result.stderr.toString()).toContain("usage: minikubelet-monitor");
  }
  expect(readdirSync(dir)).toEqual([]);
});

test("the rest of the container's process group is killed when its main process ends", async () => {
  const run = runMonitor(["sh", "-c", "sleep 100 & echo $! > bg; exit 0"]);
  expect(await exitOf(run)).toBe("0 -\n");
  const background = Number(read(join(run.root, "bg")));
  started.push(background);
  await until("the background sleep to be gone", () => !alive(background), 2000);
});

test("a process that left the group and holds stdout delays the exit by the drain time only", async () => {
  const run = runMonitor(["sh", "-c", "setsid sh -c 'echo $$ > holder; exec sleep 100' & while [ ! -s holder ]; do sleep 0.01; done; echo before; exit 0"], { drainMs: 300 });
  await until(".ended", () => existsSync(join(run.dir, ".ended")));
  const ended = Date.now();
  expect(await exitOf(run, 3000)).toBe("0 -\n");
  const holder = Number(read(join(run.root, "holder")));
  started.push(holder);
  expect(alive(holder)).toBe(true);
  expect(Date.now() - ended).toBeGreaterThanOrEqual(200);
  expect(records(read(run.log)!).map((r) => r.content)).toEqual(["before"]);
});

test("a container directory removed before the exit could be recorded does not keep the monitor waiting for it", async () => {
  const run = runMonitor(["sh", "-c", "setsid sh -c 'echo $$ > holder; exec sleep 100' & while [ ! -s holder ]; do sleep 0.01; done; exit 0"], { drainMs: 1000 });
  await until(".ended", () => existsSync(join(run.dir, ".ended")));
  started.push(Number(read(join(run.root, "holder"))));
  // Removed during the drain, as an agent that stops waiting removes a container.
  rmSync(run.dir, { recursive: true, force: true });
  const exited = await Promise.race([run.monitor.exited, Bun.sleep(5000).then(() => "still running")]);
  expect(exited).toBe(0);
});

test("the log is CRI records: streams apart, times in order, a long line as P P F, a last line without its newline as P", async () => {
  const long = "a".repeat(40000);
  const run = runMonitor(["sh", "-c", `echo out1; echo err1 >&2; echo ${long}; echo err2 >&2; printf last`]);
  expect(await exitOf(run)).toBe("0 -\n");
  const all = records(read(run.log)!);
  const stdout = all.filter((r) => r.stream === "stdout");
  const stderr = all.filter((r) => r.stream === "stderr");
  expect(stderr.map((r) => [r.tag, r.content])).toEqual([["F", "err1"], ["F", "err2"]]);
  expect(stdout.map((r) => [r.tag, r.content.length])).toEqual([["F", 4], ["P", 16384], ["P", 16384], ["F", 40000 - 2 * 16384], ["P", 4]]);
  expect(stdout[0]!.content).toBe("out1");
  expect(stdout.slice(1, 4).map((r) => r.content).join("")).toBe(long);
  expect(stdout[4]!.content).toBe("last");
  for (const stream of [stdout, stderr]) {
    const times = stream.map((r) => r.time);
    expect(times).toEqual([...times].sort());
  }
  for (const record of all) expect(Number.isNaN(Date.parse(record.time))).toBe(false);
  expect(Math.abs(Date.parse(all[0]!.time) - Date.now())).toBeLessThan(10_000);
});

/** The log and its rotations, oldest first (rotations sort by name, the live log is last). */
function logFiles(dir: string): string[] {
  const rotated = readdirSync(dir).filter((name) => name.startsWith("log.")).sort();
  return [...rotated, "log"];
}

/** Processes whose arguments name `dir` (the gzips a rotation started). */
function processesNaming(dir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => (read(`/proc/${entry}/cmdline`) ?? "").includes(dir))
    .map(Number);
}

const GZIP = ["/usr/bin/gzip", "/bin/gzip"].find((path) => existsSync(path))!;
const FLOOD = ["sh", "-c", "seq 1 200000"];

test("under a flood the log rotates by size and keeps at most max-files files, gzips racing the rotations included", async () => {
  const run = runMonitor(FLOOD, { maxBytes: 64 << 10, maxFiles: 3, gzip: GZIP });
  expect(await exitOf(run, 20_000)).toBe("0 -\n");
  await until("the gzips to finish", () => processesNaming(run.dir).length === 0);
  const files = logFiles(run.dir);
  expect(files.length).toBeLessThanOrEqual(3);
  expect(files.length).toBeGreaterThan(1);
  for (const name of files) expect(statSync(join(run.dir, name)).size).toBeLessThanOrEqual(64 << 10);
  // The newest lines are the ones kept, ending with the last.
  expect(records(read(run.log)!).at(-1)!.content).toBe("200000");
});

test("with max-files 1 a rotation keeps no rotated file: the log starts again empty", async () => {
  const run = runMonitor(["sh", "-c", "seq 1 1000"], { maxBytes: 1024, maxFiles: 1 });
  expect(await exitOf(run)).toBe("0 -\n");
  expect(logFiles(run.dir)).toEqual(["log"]);
  expect(statSync(run.log).size).toBeLessThanOrEqual(1024);
  const kept = records(read(run.log)!).map((r) => Number(r.content));
  expect(kept.at(-1)).toBe(1000);
  expect(kept).toEqual(kept.map((_, i) => kept[0]! + i));
});

test("rotations lose and repeat no line: every line of the flood is in the files, in order", async () => {
  const run = runMonitor(FLOOD, { maxBytes: 64 << 10, maxFiles: 1000 });
  expect(await exitOf(run, 20_000)).toBe("0 -\n");
  const files = logFiles(run.dir);
  expect(files.length).toBeGreaterThan(100);
  const lines = files.flatMap((name) => records(readFileSync(join(run.dir, name), "utf8")).map((r) => `${r.tag} ${r.content}`));
  expect(lines.length).toBe(200000);
  lines.forEach((line, i) => {
    if (line !== `F ${i + 1}`) expect({ at: i, line }).toEqual({ at: i, line: `F ${i + 1}` });
  });
});

test("rotated files are compressed with --gzip and the files stay within max-files; a record bigger than max-bytes is cut to fit", async () => {
  const run = runMonitor(["sh", "-c", `for i in 1 2 3 4 5 6; do echo ${"x".repeat(170)}$i; sleep 0.05; done`], { maxBytes: 200, maxFiles: 4, gzip: GZIP });
  expect(await exitOf(run)).toBe("0 -\n");
  await until("the gzips to finish", () => processesNaming(run.dir).length === 0);
  const files = logFiles(run.dir);
  expect(files.length).toBeLessThanOrEqual(4);
  expect(files.some((name) => name.endsWith(".gz"))).toBe(true);
  for (const name of files) expect(statSync(join(run.dir, name)).size).toBeLessThanOrEqual(200);
  const texts = files.map((name) => {
    const bytes = readFileSync(join(run.dir, name));
    return name.endsWith(".gz") ? gunzipSync(bytes).toString() : bytes.toString();
  });
  // Each 171-byte line is a P record of 159 bytes (200 with its header) then an F of the rest.
  const all = texts.flatMap((text) => records(text));
  expect(all.slice(-2).map((r) => [r.tag, r.content])).toEqual([["P", "x".repeat(159)], ["F", "xxxxxxxxxxx6"]]);
  for (const text of texts) for (const line of text.split("\n").filter(Boolean)) expect(line.length + 1).toBeLessThanOrEqual(200);
});

/** One small filesystem for the full-disk tests, mounted by the first that runs; freed after each. */
let disk: SmallFilesystem | undefined;
afterEach(() => disk?.free());
afterAll(() => disk?.unmount());

test("a full disk: the container keeps running, the drop is said once there is room, and the exit is told by a symlink", async () => {
  disk ??= mountSmallFilesystem(1 << 20);
  const run = runMonitor(["sh", "-c", `i=0; while :; do i=$((i+1)); echo "line $i ${"y".repeat(500)}"; sleep 0.005; done`], { root: join(disk.path, "r"), maxBytes: 10 << 20 });
  const { pid } = await pidOf(run);
  await until("some lines", () => statSync(run.log).size > 2000);
  disk.fill();
  // What room the log's last page had fills at once; then nothing more lands.
  await Bun.sleep(200);
  const full = statSync(run.log).size;
  await Bun.sleep(300);
  expect(alive(pid)).toBe(true);
  expect(statSync(run.log).size).toBe(full);
  disk.free();
  await until("the dropped-output record", () => (read(run.log) ?? "").includes("container output dropped"));
  const afterDrop = records(read(run.log)!);
  const notice = afterDrop.findIndex((r) => r.content.includes("container output dropped"));
  expect(afterDrop[notice]!.stream).toBe("stderr");
  expect(afterDrop[notice]!.content).toMatch(/at least \d+ bytes lost$/);
  await until("lines after the notice", () => records(read(run.log)!).length > notice + 3);

  // The exit file cannot take a byte on a full disk: the code is a symlink's target, which needs
  // none, and then the exited marker (an empty file) follows and the monitor is done.
  disk.fill();
  process.kill(pid, "SIGTERM");
  await until("the exited marker", () => existsSync(join(run.events, "c1.exited")));
  expect(read(join(run.dir, "exit")) ?? "").toBe("");
  expect(readlinkSync(join(run.dir, "exit-code"))).toBe("143");
  expect(await run.monitor.exited).toBe(0);
  disk.free();
  // No record was left cut short by a write that failed half way.
  for (const record of records(read(run.log)!)) {
    if (record.stream === "stdout") expect(record.content).toMatch(/^line \d+ y{500}$/);
    else expect(record.content).toMatch(/^\[minikubelet\] container output dropped: .* at least \d+ bytes lost$/);
  }
});

test("a pid file the container's process could not write on a full disk is written by the monitor once there is room", async () => {
  disk ??= mountSmallFilesystem(1 << 20);
  const root = join(disk.path, "start");
  mkdirSync(join(root, "c"), { recursive: true });
  mkdirSync(join(root, "events"), { recursive: true });
  disk.fill();
  const run = runMonitor(["sh", "-c", "while [ ! -e go ]; do sleep 0.01; done"], { root });
  await until("the started marker", () => existsSync(join(run.events, "c1.started")));
  await Bun.sleep(300);
  expect(read(join(run.dir, "pid")) ?? "").toBe("");
  disk.free();
  const { pid, ticks, monitorPid } = await pidOf(run);
  expect(statOf(pid)?.[19]).toBe(ticks);
  expect(monitorPid).toBe(run.monitor.pid);
  writeFileSync(join(root, "go"), "");
  expect(await exitOf(run)).toBe("0 -\n");
});
