/**
 * The file source's driver: reads the manifest directory at start, again whenever it changes
 * (fs.watch), and periodically as a backstop, because watch events can be missed (the kubelet's
 * fileCheckFrequency). Each read hands the full desired set to the callback; a bad file is reported
 * once per distinct message, not on every rescan.
 */
import { watch, type FSWatcher } from "node:fs";
import type { Clock } from "../clock.ts";
import { loadManifests, type SourceError } from "../manifest/source.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";

export interface ManifestWatcherOptions {
  dir: string;
  node: string;
  clock: Clock;
  /** Periodic full rescan. */
  resyncMs: number;
  onPods: (pods: Map<PodKey, PodSpec>) => void;
  onError: (error: SourceError) => void;
  /** The directory itself could not be read; the previous desired set is kept. */
  onReadFailure: (message: string) => void;
}

/** Coalesces a burst of file events (an editor's write, rename, chmod) into one rescan. */
const DEBOUNCE_MS = 100;

export class ManifestWatcher {
  private watcher?: FSWatcher;
  private cancelResync?: () => void;
  private cancelDebounce?: () => void;
  private reported = new Set<string>();

  constructor(private readonly options: ManifestWatcherOptions) {}

  /** Reads the directory once, then keeps watching. Idempotent. */
  start(): void {
    if (this.watcher) return;
    this.scan();
    try {
      this.watcher = watch(this.options.dir, () => this.scheduleScan());
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
    let result;
    try {
      result = loadManifests(this.options.dir, this.options.node);
    } catch (error) {
      // Return an error only if nothing at all could be read: the pods we have stay as they are.
      this.options.onReadFailure((error as Error).message);
      return;
    }
    const current = new Set<string>();
    for (const error of result.errors) {
      current.add(error.message);
      if (!this.reported.has(error.message)) this.options.onError(error);
    }
    this.reported = current;
    this.options.onPods(result.pods);
  }

  private scheduleScan(): void {
    this.cancelDebounce?.();
    this.cancelDebounce = this.options.clock.setTimeout(() => this.scan(), DEBOUNCE_MS);
  }

  private armResync(): void {
    this.cancelResync = this.options.clock.setTimeout(() => {
      this.scan();
      this.armResync();
    }, this.options.resyncMs);
  }
}
