/**
 * The process runtime's state: where each pod and container attempt lives, and how the files the
 * monitor writes are read back. Everything the runtime knows is in these files, so a new agent
 * process on the same roots sees exactly what the old one saw.
 *
 * Two roots, as containerd keeps its state in /run and its content on disk. What a start and an
 * exit create (records, pid, exit, markers) lives under `stateDir`, on a tmpfs when the agent has
 * one (host/volatile-state.ts): on a disk each new inode is a measurable part of a restart, and
 * none of it outlives the processes it describes. What must survive a reboot or take the disk's
 * room lives under `rootDir`: the monitor binary, each pod's working directory and volumes, and
 * the logs. A runtime given one root keeps both halves there.
 *
 * Under `rootDir`:
 * ```
 * minikubelet-monitor-<sha256>        the monitor binary (monitor-binary.ts), one per version
 * pods/<podUid>/                      the containers' default working directory
 * pods/<podUid>/volumes/<name>/       emptyDir volumes
 * pods/<podUid>/containers/<id>/      container.log[.<time>[.gz]]: the CRI log the monitor creates,
 *                                     writes and rotates (container-log-file.ts); `log`: the raw log
 *                                     of an earlier version's shell monitor
 * ```
 * Under `stateDir`:
 * ```
 * events/<id>.started|.exited         empty markers the monitor creates; one directory watch sees them all
 * pods/<podUid>/sandbox.json          { id, podUid, labels, createdAt }
 * pods/<podUid>/etc-hosts             the pod's managed /etc/hosts (process-etc-hosts.ts)
 * pods/<podUid>/containers/<id>/      one directory per container attempt:
 *     config.json                     written by the agent before the monitor starts: the record, its
 *                                     labels in it (earlier versions wrote them to labels.json beside it)
 *     pid                             "<pid> <starttime> <startedNs|-> <monitorPid> <monitorStarttime>"
 *     .ended                          "<code> -", written by the monitor the moment the process ended
 *     exit                            "<code> <finishedNs|->" (+ " lost" when the agent had to write it)
 *     exit-code                       a symlink to "<code>": the monitor's exit on a disk too full for `exit`
 * ```
 * Earlier versions kept everything under `rootDir`: a pod or container whose records are there and
 * not under `stateDir` is theirs, and is read, listed and removed where it is.
 * `-` for a time is the mtime of `pid` (start) or `.ended` (finish): the kernel's clock when the
 * monitor wrote them, so the monitor runs no `date` (a process, milliseconds of a restart). Each
 * file is new and written by one short write, so a reader sees all of it or too little to parse.
 * Every directory is 0700 and every file the agent or the log writer makes 0600 (config.json holds
 * the env, the log the output): see host/private-files.ts.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE, makePrivateDir, tightenMode } from "../../host/private-files.ts";
import type { BindMount } from "./process-mounts.ts";
import type { ProcessIdentity } from "./process-security.ts";

/** What the agent records at create time: enough to exec in the container after a restart. */
export interface ContainerRecord {
  id: string;
  podUid: string;
  sandboxId: string;
  name: string;
  attempt: number;
  workingDir: string;
  env: Record<string, string>;
  command: string[];
  createdAt: number;
  /** Volumes bind-mounted at their mountPath in the container's own mount namespace (process-mounts.ts); absent: none. */
  binds?: BindMount[];
  /** Who the process runs as (process-security.ts), and each exec in it; absent: the agent's own user, every capability (records of earlier versions). */
  identity?: ProcessIdentity;
  /** The root is read-only in its mount namespace. */
  readOnlyRoot?: true;
  /** Its UTS namespace's hostname; absent: the host's. */
  hostname?: string;
  /** The container's labels, the proof of whose it is (process-ownership.ts); absent in records of earlier versions, which kept them in labels.json. */
  labels?: Record<string, string>;
}

export interface SandboxRecord {
  id: string;
  podUid: string;
  labels: Record<string, string>;
  createdAt: number;
}

/** The `pid` file: the container's main process and its monitor, each with its kernel start time. */
export interface PidRecord {
  pid: number;
  /** /proc/<pid>/stat field 22 (clock ticks since boot): tells a reused pid from ours. */
  startTicks: string;
  startedAt: number;
  monitorPid: number;
  monitorStartTicks: string;
}

export interface ExitRecord {
  exitCode: number;
  finishedAt: number;
  /** The monitor died before the container did, so the agent wrote this record itself. */
  lost: boolean;
}

export const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Every container id begins with this: it tells which pod directory holds the container. */
export function containerIdPrefix(podUid: string): string {
  return `${podUid.slice(0, 8)}-`;
}

/** One container attempt's directory, as the layout's scans find it: `dir` holds its records. */
export interface ContainerDirEntry {
  podUid: string;
  id: string;
  dir: string;
}

export class ProcessLayout {
  /** `stateDir` defaults to `rootDir`: one root holds both halves. */
  constructor(
    readonly rootDir: string,
    readonly stateDir: string = rootDir,
  ) {}

  private knownEventsDirs: string[] | undefined;

  /** Whether records live apart from the logs and volumes, so an earlier version's may be found under `rootDir`. */
  private get split(): boolean {
    return this.stateDir !== this.rootDir;
  }

  /** The pods' directories on disk (working directories, volumes, logs). */
  get podsDir(): string {
    return join(this.rootDir, "pods");
  }
  /** The pods' records. */
  get statePodsDir(): string {
    return join(this.stateDir, "pods");
  }
  get eventsDir(): string {
    return join(this.stateDir, "events");
  }
  /** The pod's directory on disk: its containers' default working directory, its volumes and logs. */
  podDir(podUid: string): string {
    return join(this.podsDir, podUid);
  }
  /** Where the pod's sandbox.json and etc-hosts are written. */
  podStateDir(podUid: string): string {
    return join(this.statePodsDir, podUid);
  }
  volumeDir(podUid: string, volume: string): string {
    return join(this.podDir(podUid), "volumes", volume);
  }
  /** Where a new container's records go. */
  containerDir(podUid: string, id: string): string {
    return join(this.statePodsDir, podUid, "containers", id);
  }
  /** Where the container's log and its rotations are (for an earlier version's container, its records too). */
  logDir(podUid: string, id: string): string {
    return join(this.podsDir, podUid, "containers", id);
  }
  /**
   * The events directories monitors may still drop markers into: the runtime's, and the root's when
   * an earlier version's monitors wrote there. Looked for once: this version never makes the root's.
   */
  eventsDirs(): string[] {
    if (this.knownEventsDirs) return this.knownEventsDirs;
    const earlier = join(this.rootDir, "events");
    this.knownEventsDirs = this.split && existsSync(earlier) ? [this.eventsDir, earlier] : [this.eventsDir];
    return this.knownEventsDirs;
  }
  /** Where a container's marker of `kind` is, or may be (an earlier version's container's is under the root). */
  markers(id: string, kind: "started" | "exited"): string[] {
    return this.eventsDirs().map((dir) => join(dir, `${id}.${kind}`));
  }

  /** The directory holding the pod's sandbox.json (and etc-hosts): its state directory, unless only an earlier version's pod directory has one. */
  sandboxDir(podUid: string): string {
    const state = this.podStateDir(podUid);
    if (!this.split || existsSync(join(state, "sandbox.json"))) return state;
    return existsSync(join(this.podDir(podUid), "sandbox.json")) ? this.podDir(podUid) : state;
  }

  /** Every container directory, as (podUid, id, dir). Unreadable entries are skipped. */
  scanContainers(): ContainerDirEntry[] {
    return this.scanPods().flatMap((podUid) => this.podContainers(podUid));
  }

  /** One pod's container directories: what removing it reads, whatever the number of other pods. */
  podContainers(podUid: string): ContainerDirEntry[] {
    const current = listDir(join(this.statePodsDir, podUid, "containers")).map((id) => ({ podUid, id, dir: this.containerDir(podUid, id) }));
    if (!this.split) return current;
    // A directory on disk with its records in it is an earlier version's container; one with only
    // logs is the other half of a container listed above (or of one whose records a reboot took).
    const ids = new Set(current.map((entry) => entry.id));
    const earlier = listDir(join(this.podsDir, podUid, "containers"))
      .filter((id) => !ids.has(id) && holdsRecord(this.logDir(podUid, id)))
      .map((id) => ({ podUid, id, dir: this.logDir(podUid, id) }));
    return [...current, ...earlier];
  }

  /** The containers of the pods that may hold `id`: those whose uid it begins with (containerIdPrefix), so a lookup is not a scan of every pod. */
  findContainer(id: string): ContainerDirEntry[] {
    return this.scanPods()
      .filter((podUid) => id.startsWith(containerIdPrefix(podUid)))
      .flatMap((podUid) => this.podContainers(podUid));
  }

  /**
   * Narrows what an older agent left 0755/0644: the roots, their directories and each container's
   * files. Volumes' contents are the containers' own and keep their modes (their 0700 parents
   * already close them). Once per start: it reads every container directory.
   */
  tighten(): void {
    for (const path of [this.rootDir, this.podsDir, this.stateDir, this.statePodsDir, this.eventsDir]) tightenMode(path);
    for (const podUid of this.scanPods()) {
      for (const dir of new Set([this.podDir(podUid), this.podStateDir(podUid)])) {
        for (const path of [dir, join(dir, "containers"), join(dir, "volumes"), join(dir, "sandbox.json")]) tightenMode(path);
      }
      for (const { podUid: uid, id, dir } of this.podContainers(podUid)) {
        for (const path of new Set([dir, this.logDir(uid, id)])) {
          tightenMode(path);
          for (const name of listDir(path)) tightenMode(join(path, name));
        }
      }
    }
  }

  /** Every pod with records, by uid; each should hold a sandbox.json. */
  scanPods(): string[] {
    const current = listDir(this.statePodsDir);
    if (!this.split) return current;
    const known = new Set(current);
    return [...current, ...listDir(this.podsDir).filter((uid) => !known.has(uid) && existsSync(join(this.podDir(uid), "sandbox.json")))];
  }
}

/** Whether a container directory holds the record an agent writes before its monitor runs (config.json; labels.json of earlier versions). */
function holdsRecord(dir: string): boolean {
  return existsSync(join(dir, "config.json")) || existsSync(join(dir, "labels.json"));
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Writes `content` to `file` through a temp file and a rename, so readers never see half of it. */
export function writeAtomic(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, content, { mode: PRIVATE_FILE_MODE });
    renameSync(tmp, file);
  } catch (error) {
    // A full disk leaves an empty or partial temp file: it must not take what space comes back.
    rmSync(tmp, { force: true });
    throw error;
  }
}

export function writeJson(file: string, value: unknown): void {
  writeAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The file's JSON, or undefined when it cannot be read or parsed. Only for what no decision to
 * remove anything rests on (config.json): ownership is read with readRecordFile.
 */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/**
 * A record file as a decision that must not guess sees it: its value; `gone` when its directory no
 * longer exists (nothing left to act on); `unusable` with the reason when the directory is there
 * but the file is missing, unreadable, not JSON or not of the expected shape.
 */
export type RecordFile<T> = { state: "read"; value: T } | { state: "gone" } | { state: "unusable"; problem: string };

/** Reads `dir/name` as JSON that `isShape` accepts (`shape` names it in the problem); never throws. */
export function readRecordFile<T>(dir: string, name: string, shape: string, isShape: (value: unknown) => value is T): RecordFile<T> {
  const file = join(dir, name);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !existsSync(dir)) return { state: "gone" };
    return { state: "unusable", problem: code === "ENOENT" ? `${file} is missing` : `${file} cannot be read: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { state: "unusable", problem: `${file} is not JSON: ${(error as Error).message}` };
  }
  return isShape(value) ? { state: "read", value } : { state: "unusable", problem: `${file} is not ${shape}` };
}

/** config.json's shape, as far as ownership reads it: a record whose labels, when it has them, are a map of strings. */
export function isContainerRecord(value: unknown): value is ContainerRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Partial<Record<keyof ContainerRecord, unknown>>;
  return typeof record.id === "string" && (record.labels === undefined || isLabelMap(record.labels));
}

/** A map of labels' shape (labels.json of earlier versions, and the labels in a record): an object of strings. */
export function isLabelMap(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string");
}

/** sandbox.json's shape, as far as listing and ownership read it. */
export function isSandboxRecord(value: unknown): value is SandboxRecord {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Partial<Record<keyof SandboxRecord, unknown>>;
  return typeof record.id === "string" && typeof record.podUid === "string" && isLabelMap(record.labels);
}

/** `mkdir -p`, each directory it creates 0700. */
export function ensureDir(dir: string): void {
  makePrivateDir(dir);
}

/** The file's text, or undefined when it cannot be read. */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Reads a time the monitor wrote: `-` is `file`'s mtime (see above); monitors of earlier versions
 * ran `date +%s%N`, where GNU date gives 19 digits of nanoseconds and busybox date prints `%N`
 * literally, so then too the file's own mtime stands in. Returns epoch milliseconds.
 */
export function parseMonitorTime(text: string | undefined, file: string): number {
  if (text === "-") return existsSync(file) ? statSync(file).mtimeMs : Number.NaN;
  if (text && /^\d{19}$/.test(text)) return Math.floor(Number(BigInt(text) / 1000n)) / 1000;
  if (text && /^\d{10}/.test(text) && existsSync(file)) return statSync(file).mtimeMs;
  if (text && /^\d{10}/.test(text)) return Number(text.slice(0, 10)) * 1000;
  return Number.NaN;
}

export function readPid(dir: string): PidRecord | undefined {
  const file = readPidFile(dir);
  return file.state === "read" ? file.value : undefined;
}

/**
 * The `pid` file as a decision to signal sees it: `none` while there is none yet or it is still
 * empty (a reader can land between the monitor's open and its one short write, never inside the
 * write), `unusable` when what it holds does not name two processes: then nothing recorded proves
 * which process is the container's.
 */
export function readPidFile(dir: string): { state: "read"; value: PidRecord } | { state: "none" } | { state: "unusable"; problem: string } {
  const file = join(dir, "pid");
  const text = readText(file);
  if (text === undefined || text === "") return { state: "none" };
  const fields = text.trim().split(/\s+/);
  const [pid, startTicks, started, monitorPid, monitorStartTicks] = fields as [string, string, string, string, string];
  const numbers = [pid, startTicks, monitorPid, monitorStartTicks];
  const named = fields.length === 5 && numbers.every((field) => /^\d+$/.test(field)) && Number(pid) > 0 && Number(monitorPid) > 0;
  if (!named) {
    return { state: "unusable", problem: `${file} does not name the container's process (${JSON.stringify(text.slice(0, 60))})` };
  }
  return {
    state: "read",
    value: { pid: Number(pid), startTicks, startedAt: Math.round(parseMonitorTime(started, file)), monitorPid: Number(monitorPid), monitorStartTicks },
  };
}

export function readExit(dir: string): ExitRecord | undefined {
  const file = join(dir, "exit");
  const fields = readText(file)?.trim().split(/\s+/);
  if (!fields || fields.length < 2) return readExitCodeLink(dir);
  const ended = join(dir, ".ended");
  return {
    exitCode: Number(fields[0]),
    finishedAt: Math.round(parseMonitorTime(fields[1], fields[1] === "-" && existsSync(ended) ? ended : file)),
    lost: fields[2] === "lost",
  };
}

/**
 * The exit the monitor recorded on a full disk, where `exit` could not take a byte: a symlink
 * `exit-code` whose target is the code (a short target lives in the inode). Its finish time is
 * `.ended`'s mtime when that landed, else the link's own.
 */
function readExitCodeLink(dir: string): ExitRecord | undefined {
  const link = join(dir, "exit-code");
  let target: string;
  try {
    target = readlinkSync(link);
  } catch {
    return undefined;
  }
  if (!/^\d{1,3}$/.test(target)) return undefined;
  const ended = join(dir, ".ended");
  const finishedAt = existsSync(ended) && statSync(ended).size > 0 ? statSync(ended).mtimeMs : lstatSync(link).mtimeMs;
  return { exitCode: Number(target), finishedAt: Math.round(finishedAt), lost: false };
}

/** The exit code of an exit the monitor could not record. */
export const LOST_EXIT_CODE = 255;

/** Records an exit the monitor could not (it died first); `finishedAt` is when the agent noticed. */
export function writeLostExit(dir: string, finishedAt: number): void {
  writeAtomic(join(dir, "exit"), `${LOST_EXIT_CODE} ${BigInt(Math.round(finishedAt)) * 1_000_000n} lost\n`);
}

