/**
 * The directory source (the kubelet's staticPodPath): every regular `.yaml`, `.yml` or `.json` file
 * directly in the directory (or a symlink to one, followed as the kubelet follows it) is one pod.
 * Like the kubelet's file source, hidden files (an editor's `.web.yaml.swp`) are skipped, and an
 * entry that does not load is reported and left out, so its pod is stopped like a removed file:
 * a directory named like a manifest is not recursed into, and a FIFO or device is not opened,
 * each reported where the kubelet logs it. Unlike the kubelet, other extensions (`web.yaml.bak`)
 * are skipped (kubernetes#136962).
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { PodKey, PodSpec } from "./types.ts";
import { ManifestError, ManifestSourceError, type Issue } from "./errors.ts";
import { isPlainObject } from "./fields.ts";
import { checkDns1123Label, checkDns1123Subdomain } from "./names.ts";
import { manifestFormat, readManifestFile } from "./parse.ts";
import { admitPod, declaresPod, type AdmittedPod, type ManifestRules } from "./admit.ts";
import { checkNodeName, DEFAULT_NAMESPACE, fullPodName } from "./validation/validate.ts";

/** Why a file is not run: it did not decode (the API server's BadRequest), or is not a valid Pod. */
export type SourceErrorReason = "FailedToParse" | "Invalid";

export interface SourceError {
  /** Absolute path of the file that was dropped. */
  file: string;
  /** One line starting with the file's name: `web.yaml: spec.containers[0].image: required`. */
  message: string;
  reason: SourceErrorReason;
  /** Every problem, each with its field path. */
  issues: readonly Issue[];
  /** Where the user finds the file in `get pods`: the pod's namespace and full name if they could be read, else `default` and the file's name. */
  namespace: string;
  name: string;
}

export interface LoadResult {
  pods: Map<PodKey, PodSpec>;
  /** Files that were dropped, in name order. */
  errors: SourceError[];
  /** Pods that run, but with fields that will not take effect; only pods with warnings. */
  warnings: Map<PodKey, Issue[]>;
}

/**
 * Loads one manifest file as a pod.
 * @param displayName the file as it appears in messages (default: its base name).
 * @throws ManifestError when the file cannot be read, decoded or validated.
 */
export function loadManifest(path: string, node = "", displayName?: string, rules: ManifestRules = {}): PodSpec {
  return admitManifest(path, node, displayName, rules).pod;
}

function admitManifest(path: string, node: string, displayName: string | undefined, rules: ManifestRules): AdmittedPod {
  const source = resolve(path);
  const file = displayName ?? basename(source);
  return admitPod(readManifestFile(source, file), { file, source, node }, rules);
}

/**
 * Loads every manifest in `dir`, in name order. A second file defining a pod key already loaded is
 * refused (the first file, by name, wins) with a message naming both files.
 * @throws ManifestSourceError when the directory itself cannot be listed (nothing could be read).
 * @throws RangeError when `node` is not a valid node name.
 */
export function loadManifests(dir: string, node = "", rules: ManifestRules = {}, taken: TakenPods = new Map(), cache?: ManifestCache): LoadResult {
  checkNode(node);
  const root = resolve(dir);
  return loadFiles(root, listManifestFiles(root), node, rules, taken, cache);
}

/** One file's outcome before the checks across files (duplicates, taken keys). */
type FileOutcome = { admitted: AdmittedPod } | { error: ManifestError; raw: unknown };

/**
 * File times are coarse (a kernel tick): a file rewritten in place with the same size just after a
 * read may keep its mtime. An outcome is trusted only once it was read this long after the file's
 * mtime, as git treats "racily clean" entries.
 */
const RACY_MS = 2000;

interface CachedOutcome {
  stamp: string;
  mtimeMs: number;
  readAt: number;
  outcome: FileOutcome;
}

/**
 * What each file gave on the last read, by its stat (inode, size, mtime, ctime): a periodic rescan
 * of a thousand unchanged files then parses none of them. Valid for one node and one set of rules,
 * the watcher's.
 */
export class ManifestCache {
  private entries = new Map<string, CachedOutcome>();
  private seen = new Map<string, CachedOutcome>();

  /** @param now the wall clock, compared with file times. */
  constructor(private readonly now: () => number) {}

  /** The outcome for `file` in `path`, read again unless its stat is the one an earlier, safe read saw. */
  outcome(path: string, file: ManifestFile | undefined, read: () => FileOutcome): FileOutcome {
    if (!file) return read();
    const cached = this.entries.get(path);
    const fresh = cached && cached.stamp === file.stamp && cached.mtimeMs < cached.readAt - RACY_MS ? cached : undefined;
    const entry = fresh ?? { stamp: file.stamp, mtimeMs: file.mtimeMs, readAt: this.now(), outcome: read() };
    this.seen.set(path, entry);
    return entry.outcome;
  }

  /** Ends a read: files not seen in it are dropped. */
  settle(): void {
    this.entries = this.seen;
    this.seen = new Map();
  }
}

/**
 * Pod keys another source already has (the API's pods), each with how to name its owner in the
 * refusal (`the API (uid ...)`): a file defining one is refused like a second file of a pod.
 */
export type TakenPods = ReadonlyMap<PodKey, string>;

/** `validate FILE`: one file, named as given, loaded exactly as it would be from its directory. */
export function loadManifestFile(path: string, node = "", rules: ManifestRules = {}): LoadResult {
  checkNode(node);
  const source = resolve(path);
  return loadFiles(dirname(source), [basename(source)], node, rules);
}

function checkNode(node: string): void {
  const nodeProblem = checkNodeName(node);
  if (nodeProblem) throw new RangeError(`node name: ${nodeProblem}`);
}

function readOutcome(path: string, name: string, node: string, rules: ManifestRules): FileOutcome {
  let raw: unknown;
  try {
    raw = readManifestFile(path, name);
    return { admitted: admitPod(raw, { file: name, source: path, node }, rules) };
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return { error, raw };
  }
}

function loadFiles(root: string, files: Array<string | ManifestFile>, node: string, rules: ManifestRules, taken: TakenPods = new Map(), cache?: ManifestCache): LoadResult {
  const pods = new Map<PodKey, PodSpec>();
  const errors: SourceError[] = [];
  const warnings = new Map<PodKey, Issue[]>();
  for (const file of files) {
    const name = typeof file === "string" ? file : file.name;
    const path = join(root, name);
    const read = () => readOutcome(path, name, node, rules);
    const outcome = cache ? cache.outcome(path, typeof file === "string" ? undefined : file, read) : read();
    if ("error" in outcome) {
      const reason = outcome.raw === undefined ? "FailedToParse" : "Invalid";
      errors.push(sourceError(path, outcome.error, reason, identify(outcome.raw, node, name)));
      continue;
    }
    const { pod, warnings: podWarnings } = outcome.admitted;
    const owner = taken.get(pod.key);
    if (owner !== undefined) {
      const issues = [{ path: [], message: `pod ${pod.key} already exists, created through ${owner}; ignoring this file` }];
      errors.push(sourceError(path, new ManifestError(name, issues), "Invalid", { namespace: pod.namespace, name }));
      continue;
    }
    const existing = pods.get(pod.key);
    if (existing) {
      const first = basename(existing.source);
      const issues = [{ path: [], message: `pod ${pod.key} is already defined in ${first}; ignoring this file` }];
      errors.push(sourceError(path, new ManifestError(name, issues), "Invalid", { namespace: pod.namespace, name }));
      continue;
    }
    pods.set(pod.key, pod);
    if (podWarnings.length > 0) warnings.set(pod.key, podWarnings);
  }
  cache?.settle();
  // A refused file whose pod name another file's pod already has is shown under its own name.
  for (const error of errors) if (pods.has(`${error.namespace}/${error.name}`) || taken.has(`${error.namespace}/${error.name}`)) error.name = basename(error.file);
  return { pods, errors, warnings };
}

function sourceError(file: string, error: ManifestError, reason: SourceErrorReason, where: { namespace: string; name: string }): SourceError {
  return { file, message: error.message, reason, issues: error.issues, ...where };
}

/** The pod's namespace and full name as far as the file says them validly; else the file's name. */
function identify(raw: unknown, node: string, fileName: string): { namespace: string; name: string } {
  const metadata = isPlainObject(raw) && isPlainObject(raw.metadata) ? raw.metadata : {};
  const namespace = typeof metadata.namespace === "string" && metadata.namespace !== "" && !checkDns1123Label(metadata.namespace) ? metadata.namespace : DEFAULT_NAMESPACE;
  // A file that is not a Pod is not read for names either: what it says is no one's to publish.
  if (!declaresPod(raw)) return { namespace: DEFAULT_NAMESPACE, name: fileName };
  const podName = typeof metadata.name === "string" && metadata.name !== "" ? fullPodName(metadata.name, node) : undefined;
  return { namespace, name: podName !== undefined && !checkDns1123Subdomain(podName) ? podName : fileName };
}

/** A manifest file in the directory, with its stat as a cache stamp. */
interface ManifestFile {
  name: string;
  stamp: string;
  mtimeMs: number;
}

/**
 * The entries directly in `root` named like manifests, sorted by name, whatever they are (a file,
 * a directory, a FIFO, a symlink loop: reading refuses what is not a regular file, naming it). A
 * dangling symlink, or an entry gone since the listing, is not there.
 */
function listManifestFiles(root: string): ManifestFile[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "does not exist" : code === "ENOTDIR" ? "is not a directory" : (error as Error).message;
    throw new ManifestSourceError(root, reason, { cause: error });
  }
  const files: ManifestFile[] = [];
  for (const name of names.filter((name) => !name.startsWith(".") && manifestFormat(name) !== undefined).sort()) {
    try {
      // Not { bigint: true }: ten times slower here, and the racy-read rule makes milliseconds enough.
      const stat = statSync(join(root, name));
      files.push({ name, stamp: `${stat.mode} ${stat.ino} ${stat.size} ${stat.mtimeMs} ${stat.ctimeMs}`, mtimeMs: stat.mtimeMs });
    } catch (error) {
      // Removed since the listing, or a dangling symlink: not a pod in this pass. Anything else (a
      // symlink loop) is the entry's own refusal, which reading it again words.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") files.push({ name, stamp: `unreadable ${code}`, mtimeMs: 0 });
    }
  }
  return files;
}
