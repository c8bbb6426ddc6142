/**
 * The file source's driver: reads the manifest directory at start, again whenever it changes
 * (fs.watch: at once for a file renamed in or removed, after a quiet period for one written in
 * place), and periodically as a backstop, because watch events can be missed (the kubelet's
 * fileCheckFrequency). Each read hands the full desired set to the callback; a bad file is reported
 * once per distinct message, not on every rescan, and the set of refused files is handed over
 * whenever it changes. Fields a pod runs without are reported once per pod.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename } from "node:path";
import type { Clock } from "../clock.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import type { Issue } from "../manifest/errors.ts";
import { loadManifests, ManifestCache, type SourceError, type TakenPods } from "../manifest/source.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import { refusedManifestUid, type RefusedManifest } from "./refused-manifests.ts";

export interface ManifestWatcherOptions {
  dir: string;
  node: string;
  clock: Clock;
  /** Periodic full rescan. */
  resyncMs: number;
  /** The runtime's rules and strictness, as for `validate`. */
  rules?: ManifestRules;
  /** Pod keys another source has now (the API's pods): a file defining one is refused, naming its owner. */
  taken?: () => TakenPods;
  /** Pods checkpointed by an earlier agent, by file: a file that turned bad meanwhile names its pod too. */
  checkpointed?: ReadonlyMap<string, PodKey>;
  onPods: (pods: Map<PodKey, PodSpec>) => void;
  onError?: (error: SourceError) => void;
  /**
   * Every refused file, after the first read and whenever the set or a file's problems change;
   * `fresh` are the ones not reported before (or reported with other problems).
   */
  onRefused?: (refused: RefusedManifest[], fresh: RefusedManifest[]) => void;
  /** Fields a pod runs without (unknown, or not honoured by the runtime): once per pod uid. */
  onWarnings?: (pod: PodSpec, warnings: Issue[]) => void;
  /** The directory itself could not be read; the previous desired set is kept. */
  onReadFailure: (message: string) => void;
}

/**
 * Coalesces a burst of in-place writes (an editor's truncate and write, a chmod) into one rescan.
 * A rename needs none: the file appears whole (the way to drop a manifest in without a window).
 */
const DEBOUNCE_MS = 100;

export class ManifestWatcher {
  private watcher?: FSWatcher;
  private cancelResync?: () => void;
  private cancelDebounce?: () => void;
  /** Files renamed in, created or removed since the last read (fs.watch's "rename" events). */
  private renamed = new Set<string>();
  /** A file was written in place since the last read: the read waits for the quiet period. */
  private written = false;
  private reported = new Set<string>();
  private refusedOnce = false;
  /** The pod each file ran as in the last read: a file turning bad stops that pod. */
  private podsByFile = new Map<string, PodKey>();
  private warned = new Set<string>();
  /** A periodic rescan parses only the files that changed. */
  private readonly cache: ManifestCache;

  constructor(private readonly options: ManifestWatcherOptions) {
    this.podsByFile = new Map(options.checkpointed);
    this.cache = new ManifestCache(() => options.clock.now());
  }

  /** Reads the directory once, then keeps watching. Idempotent. */
  start(): void {
    if (this.watcher) return;
    this.scan();
    try {
      this.watcher = watch(this.options.dir, (type, filename) => this.onChange(type, filename?.toString()));
      this.watcher.on("error", (error) => this.options.onReadFailure(`watching ${this.options.dir}: ${error.message}`));
    } catch (error) {
      this.options.onReadFailure(`watching ${this.options.dir}: ${(error as Error).message}; relying on the periodic rescan`);
    }
    this.armResync();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.cancelResync?.();
    this.cancelDebounce?.();
  }

  /** One full read of the directory; exported for tests and for the first pass. */
  scan(): void {
    this.renamed.clear();
    this.written = false;
    this.read();
  }

  /**
   * A read at once after renames. A "rename" is also a file being created, and its content may be
   * on its way: a file of the burst that does not load is given the quiet period before it is refused.
   */
  private scanRenamed(): void {
    const renamed = this.renamed;
    this.renamed = new Set();
    this.written = false;
    this.read((failed) => {
      if (!failed.some((file) => renamed.has(basename(file)))) return true;
      for (const name of renamed) this.renamed.add(name);
      this.written = true;
      this.scheduleScan(DEBOUNCE_MS);
      return false;
    });
  }

  /** Reads the directory and hands the result over, unless `accept` (given the refused files) declines it. */
  private read(accept: (failed: string[]) => boolean = () => true): void {
    let result;
    try {
      result = loadManifests(this.options.dir, this.options.node, this.options.rules, this.options.taken?.(), this.cache);
    } catch (error) {
      // Return an error only if nothing at all could be read: the pods we have stay as they are.
      this.options.onReadFailure((error as Error).message);
      return;
    }
    if (!accept(result.errors.map((error) => error.file))) return;
    const current = new Set<string>();
    const refused: RefusedManifest[] = [];
    const fresh: RefusedManifest[] = [];
    for (const error of result.errors) {
      current.add(error.message);
      const entry: RefusedManifest = { ...error, uid: refusedManifestUid(this.options.node, error.file) };
      const stopped = this.podsByFile.get(error.file);
      if (stopped) entry.stopped = stopped;
      refused.push(entry);
      if (this.reported.has(error.message)) continue;
      fresh.push(entry);
      this.options.onError?.(error);
    }
    const changed = !this.refusedOnce || current.size !== this.reported.size || fresh.length > 0;
    this.reported = current;
    this.refusedOnce = true;
    if (changed) this.options.onRefused?.(refused, fresh);
    this.podsByFile = new Map([...result.pods.values()].map((pod) => [pod.source, pod.key]));
    this.reportWarnings(result.pods, result.warnings);
    this.options.onPods(result.pods);
  }

  private reportWarnings(pods: Map<PodKey, PodSpec>, warnings: Map<PodKey, Issue[]>): void {
    const uids = new Set<string>();
    for (const [key, pod] of pods) {
      uids.add(pod.uid);
      const issues = warnings.get(key);
      if (issues && !this.warned.has(pod.uid)) this.options.onWarnings?.(pod, issues);
    }
    this.warned = uids;
  }

  private onChange(type: string, filename: string | undefined): void {
    if (type === "rename" && filename) {
      this.renamed.add(filename);
      // An in-place write in the same burst keeps its quiet period; the renames are read with it.
      if (!this.written) this.scheduleScan(0);
      return;
    }
    this.written = true;
    this.scheduleScan(DEBOUNCE_MS);
  }

  /** At 0 ms the read still waits for this turn's other events (a rename's two halves come together). */
  private scheduleScan(delayMs: number): void {
    this.cancelDebounce?.();
    this.cancelDebounce = this.options.clock.setTimeout(() => (this.written ? this.scan() : this.scanRenamed()), delayMs);
  }

  private armResync(): void {
    this.cancelResync = this.options.clock.setTimeout(() => {
      this.scan();
      this.armResync();
    }, this.options.resyncMs);
  }
}
