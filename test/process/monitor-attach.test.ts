/**
 * The compiled monitor's stdin, terminal and attach socket (monitor/minikubelet-monitor.c), run
 * directly with no agent, spoken to as process-attach.ts would: frames `type, uint32 BE length,
 * payload`. Echo through a `cat`, stdin-once's EOF, a detach that leaves stdin open, a terminal and
 * its size, a client that never reads, and the volumes bound at their mountPath in the
 * container's own mount namespace (root only: this suite runs as root).
 */
import { monitorFixtures, read, until } from "../monitor-fixtures.ts";
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { join } from "node:path";

const { binary, tempDir, started } = monitorFixtures("mkm-attach-");

interface Run {
  root: string;
  dir: string;
  log: string;
  socket: string;
  monitor: ReturnType<typeof Bun.spawn>;
}

function runMonitor(command: string[], extra: string[], root = tempDir()): Run {
  const dir = join(root, "c");
  const events = join(root, "events");
  mkdirSync(dir, { recursive: true });
  mkdirSync(events, { recursive: true });
  const log = join(dir, "log");
  const socket = join(root, "attach.sock");
  const args = [binary, "--dir", dir, "--events", events, "--id", "c1", "--log", log, "--log-max-bytes", String(10 << 20), "--log-max-files", "3"];
  args.push("--attach-socket", socket, ...extra, "--", ...command);
  const monitor = Bun.spawn(args, { cwd: root, detached: true, stdio: ["ignore", "ignore", "ignore"], env: { PATH: "/usr/bin:/bin", HOME: root } });
  started.push(monitor.pid);
  return { root, dir, log, socket, monitor };
}

async function pidOf(run: Run): Promise<number> {
  await until("the pid file", () => (read(join(run.dir, "pid")) ?? "").endsWith("\n"));
  const pid = Number(read(join(run.dir, "pid"))!.split(" ")[0]);
  started.push(pid);
  return pid;
}

async function exitOf(run: Run, timeoutMs = 5000): Promise<string> {
  await until("the exit file", () => (read(join(run.dir, "exit")) ?? "").endsWith("\n"), timeoutMs);
  expect(await run.monitor.exited).toBe(0);
  return read(join(run.dir, "exit"))!;
}

/** The contents of the log's records, in order. */
function logged(run: Run): string[] {
  return (read(run.log) ?? "")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.slice(31));
}

function frame(type: number, payload: Uint8Array | string = new Uint8Array()): Uint8Array {
  const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(5 + bytes.length);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, bytes.length);
  out.set(bytes, 5);
  return out;
}
const STDIN = 0, CLOSE_STDIN = 1, RESIZE = 2, HELLO = 3;

interface Attach {
  /** Everything the monitor sent as STDOUT (1) or STDERR (2), decoded, and EXIT's payload. */
  output: () => string;
  exit: () => string | undefined;
  closed: Promise<void>;
  isClosed: () => boolean;
  send: (bytes: Uint8Array) => void;
  end: () => void;
}

async function attach(path: string, feeds: boolean): Promise<Attach> {
  let buffered = new Uint8Array();
  let output = "";
  let exit: string | undefined;
  let isClosed = false;
  let closedResolve!: () => void;
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  const decoder = new TextDecoder();
  const socket = await Bun.connect({
    unix: path,
    socket: {
      data(_socket, chunk) {
        const joined = new Uint8Array(buffered.length + chunk.length);
        joined.set(buffered);
        joined.set(chunk, buffered.length);
        let at = 0;
        while (joined.length - at >= 5) {
          const len = new DataView(joined.buffer, joined.byteOffset + at + 1, 4).getUint32(0);
          if (joined.length - at - 5 < len) break;
          const payload = joined.subarray(at + 5, at + 5 + len);
          if (joined[at] === 3) exit = decoder.decode(payload);
          else output += decoder.decode(payload);
          at += 5 + len;
        }
        buffered = joined.slice(at);
      },
      close() {
        isClosed = true;
        closedResolve();
      },
      error() {
        isClosed = true;
        closedResolve();
      },
    },
  });
  socket.write(frame(HELLO, new Uint8Array([feeds ? 1 : 0])));
  return {
    output: () => output,
    exit: () => exit,
    closed,
    isClosed: () => isClosed,
    send: (bytes) => void socket.write(bytes),
    end: () => socket.end(),
  };
}

test("a cat with --stdin echoes what an attach sends, into its frames and the log; a CLOSE_STDIN is a detach and a second attach still echoes", async () => {
  const run = runMonitor(["cat"], ["--stdin"]);
  const pid = await pidOf(run);
  // Listening, 0600, before the container ran.
  expect(statSync(run.socket).mode & 0o777).toBe(0o600);
  const first = await attach(run.socket, true);
  first.send(frame(STDIN, "hello\n"));
  await until("the echo", () => first.output() === "hello\n");
  first.send(frame(CLOSE_STDIN));
  await first.closed;
  expect(first.exit()).toBeUndefined();

  // The cat has had no EOF: it is still there, reading.
  await Bun.sleep(100);
  expect(existsSync(join(run.dir, ".ended"))).toBe(false);
  const second = await attach(run.socket, true);
  second.send(frame(STDIN, "again\n"));
  await until("the second echo", () => second.output() === "again\n");
  expect(logged(run)).toEqual(["stdout F hello", "stdout F again"]);

  process.kill(pid, "SIGTERM");
  expect(await exitOf(run)).toBe("143 -\n");
  await second.closed;
  expect(second.exit()).toBe("143");
  expect(existsSync(run.socket)).toBe(false);
});

test("with --stdin-once the first attach's CLOSE_STDIN is the container's EOF: the cat ends 0, and the attach gets the rest and EXIT 0", async () => {
  const run = runMonitor(["sh", "-c", "cat; echo done >&2"], ["--stdin", "--stdin-once"]);
  await pidOf(run);
  const client = await attach(run.socket, true);
  const watcher = await attach(run.socket, false);
  client.send(frame(STDIN, "one\ntwo\n"));
  // A watcher's stdin is ignored and its output is the same.
  watcher.send(frame(STDIN, "ignored\n"));
  client.send(frame(CLOSE_STDIN));
  await client.closed;
  await watcher.closed;
  expect(client.exit()).toBe("0");
  expect(client.output()).toBe("one\ntwo\ndone\n");
  expect(watcher.exit()).toBe("0");
  expect(watcher.output()).toBe("one\ntwo\ndone\n");
  expect(await exitOf(run)).toBe("0 -\n");
  expect(logged(run)).toEqual(["stdout F one", "stdout F two", "stderr F done"]);
});

test("with --stdin-once the first attach going away closes the container's stdin too", async () => {
  const run = runMonitor(["cat"], ["--stdin", "--stdin-once"]);
  await pidOf(run);
  const client = await attach(run.socket, true);
  client.send(frame(STDIN, "bye\n"));
  await until("the echo", () => client.output() === "bye\n");
  client.end();
  expect(await exitOf(run)).toBe("0 -\n");
});

test("--tty: the container runs on a terminal (its controlling one) whose size a RESIZE sets; its output is logged as stdout", async () => {
  const run = runMonitor(["sh", "-c", "stty size; read go; stty size; tty; [ -t 0 ] && [ -t 2 ] && echo all-terminal"], ["--stdin", "--tty"]);
  await pidOf(run);
  await until("the default size", () => logged(run).length > 0);
  expect(logged(run)[0]).toBe("stdout F 24 80\r");
  const client = await attach(run.socket, true);
  client.send(frame(RESIZE, new Uint8Array([0, 123, 0, 45])));
  client.send(frame(STDIN, "go\r"));
  await client.closed;
  expect(client.exit()).toBe("0");
  expect(await exitOf(run)).toBe("0 -\n");
  // The terminal echoes the typing; then the new size, the terminal's name, and 0 and 2 on it.
  expect(client.output()).toMatch(/^go\r\n45 123\r\n\/dev\/pts\/\d+\r\nall-terminal\r\n$/);
  const lines = logged(run);
  expect(lines.every((line) => line.startsWith("stdout "))).toBe(true);
  expect(lines.slice(1).map((line) => line.slice(9))).toEqual(client.output().split("\n").slice(0, -1));
});

test("a client that never reads is dropped, and does not stop a container printing 50 MB from finishing", async () => {
  const run = runMonitor(["sh", "-c", "read go; head -c 50000000 /dev/zero | tr '\\0' 'x' | fold -w 1000"], ["--stdin"]);
  await pidOf(run);
  let received = 0;
  let closed = false;
  const slow = netConnect({ path: run.socket });
  await new Promise<void>((resolve) => slow.on("connect", () => resolve()));
  slow.on("data", (chunk: Buffer) => (received += chunk.length));
  slow.on("close", () => (closed = true));
  slow.on("error", () => (closed = true));
  slow.write(frame(HELLO, new Uint8Array([1])));
  slow.write(frame(STDIN, "go\n"));
  slow.pause();
  const began = Date.now();
  expect(await exitOf(run, 30000)).toBe("0 -\n");
  const elapsed = Date.now() - began;
  slow.resume();
  await until("the slow client's close", () => closed);
  // Dropped long before the end: far less than the 50 MB, and no EXIT frame among it.
  expect(received).toBeLessThan(4 << 20);
  expect(elapsed).toBeLessThan(30000);
  slow.destroy();
});

test("more than 16 attaches at once: the 17th is closed at once, the others stay", async () => {
  const run = runMonitor(["cat"], ["--stdin"]);
  const pid = await pidOf(run);
  const clients: Attach[] = [];
  for (let i = 0; i < 16; i++) clients.push(await attach(run.socket, false));
  // Closed at once by the monitor, or, on a loaded host where the monitor has not accepted the
  // others yet, refused by the kernel: either way not served.
  const extra = await attach(run.socket, false).catch(() => undefined);
  await extra?.closed;
  const feeder = clients[0]!;
  feeder.send(frame(CLOSE_STDIN));
  await feeder.closed;
  const another = await attach(run.socket, true);
  another.send(frame(STDIN, "x\n"));
  await until("every attach's echo", () => another.output() === "x\n" && clients.slice(1).every((c) => c.output() === "x\n"));
  expect(clients.slice(1).some((c) => c.isClosed())).toBe(false);
  process.kill(pid, "SIGKILL");
  expect(await exitOf(run)).toBe("137 -\n");
});

// ---- volumes at their mountPath ----------------------------------------------------------------

test("--bind wants two values: one is a usage error (exit 2)", () => {
  const dir = tempDir();
  const base = ["--dir", dir, "--events", dir, "--id", "x", "--log", join(dir, "log"), "--log-max-bytes", "100", "--log-max-files", "2"];
  const result = Bun.spawnSync([binary, ...base, "--bind-ro", dir], { stderr: "pipe" });
  expect(result.exitCode).toBe(2);
  expect(result.stderr.toString()).toContain("--bind-ro wants SRC and DST");
});

function hostMounts(): string {
  return readFileSync("/proc/self/mountinfo", "utf8");
}

test("--bind: the container sees SRC at DST, in its own mount namespace; the host's mount table is unchanged", async () => {
  const root = tempDir();
  const src = join(root, "src");
  const dst = join(root, "dst");
  mkdirSync(src);
  mkdirSync(dst);
  writeFileSync(join(src, "file"), "from-src\n");
  expect(hostMounts()).not.toContain(dst);
  const run = runMonitor(["sh", "-c", `cat ${dst}/file; echo written > ${dst}/new; while [ ! -e go ]; do sleep 0.01; done`], ["--bind", src, dst], root);
  const pid = await pidOf(run);
  await until("the cat", () => logged(run).length > 0);
  expect(logged(run)).toEqual(["stdout F from-src"]);
  // The shell's redirection makes the file before echo writes to it: wait for the line, not the file.
  await until("the write through DST", () => (read(join(src, "new")) ?? "") !== "");
  expect(read(join(src, "new"))).toBe("written\n");
  expect(readFileSync(`/proc/${pid}/mountinfo`, "utf8")).toContain(` ${dst} `);
  // Not the whole table: other processes (dockerd) mount and unmount on this host meanwhile.
  expect(hostMounts()).not.toContain(dst);
  expect(existsSync(join(dst, "file"))).toBe(false);
  writeFileSync(join(root, "go"), "");
  expect(await exitOf(run)).toBe("0 -\n");
});

test("--bind-ro: the container reads SRC at DST and cannot write there; nothing reaches SRC", async () => {
  const root = tempDir();
  const src = join(root, "src");
  const dst = join(root, "dst");
  const rw = join(root, "rw");
  mkdirSync(src);
  mkdirSync(dst);
  mkdirSync(rw);
  writeFileSync(join(src, "file"), "read-only\n");
  const run = runMonitor(["sh", "-c", `cat ${dst}/file; echo y > ${rw}/y; echo x > ${dst}/y`], ["--bind", src, rw, "--bind-ro", src, dst], root);
  expect(await exitOf(run)).not.toBe("0 -\n");
  expect(logged(run)[0]).toBe("stdout F read-only");
  expect(logged(run).join("\n")).toContain("Read-only file system");
  // The first, writable bind did write through to SRC; the read-only one did not.
  expect(read(join(src, "y"))).toBe("y\n");
  rmSync(join(src, "y"));
  const again = runMonitor(["sh", "-c", `echo x > ${dst}/y`], ["--bind-ro", src, dst], tempDir());
  expect(await exitOf(again)).not.toBe("0 -\n");
  expect(existsSync(join(src, "y"))).toBe(false);
});

test("a bind that cannot be made (SRC missing) is exit 126 before the exec, with SRC, DST and why in monitor.err", async () => {
  const root = tempDir();
  const dst = join(root, "dst");
  mkdirSync(dst);
  const missing = join(root, "no-such-src");
  const run = runMonitor(["sh", "-c", "echo ran"], ["--bind", missing, dst], root);
  expect(await exitOf(run)).toBe("126 -\n");
  expect(logged(run)).toEqual([]);
  const err = read(join(run.dir, "monitor.err"))!;
  expect(err).toContain(missing);
  expect(err).toContain(dst);
  expect(err).toContain("No such file or directory");
});
