/**
 * The eviction manager's local storage check for emptyDir sizeLimits (localStorageEviction's
 * emptyDirLimitEviction), without the evicting: every 10 s (the kubelet's eviction monitoring
 * period) each limited volume is measured, one at a time, off the loop; a volume past its limit is
 * reported to `onExceeded`, which the loop turns into an eviction on a pass of its own
 * (kubelet/empty-dir-eviction.ts carries out what pod-eviction.ts decides).
 */
import type { Clock } from "../clock.ts";
import type { MeasureDir } from "./dir-usage.ts";

export const LOCAL_STORAGE_CHECK_PERIOD_MS = 10_000;

/** One emptyDir with a sizeLimit, where the runtime keeps it. */
export interface LimitedVolume {
  podKey: string;
  volume: string;
  path: string;
  limitBytes: number;
  /** The limit as written (`1Mi`), for the message. */
  limit: string;
}

export interface LocalStorageOptions {
  clock: Clock;
  /** The volumes to look at now (pods that run, with limited emptyDirs). */
  volumes: () => LimitedVolume[];
  measure: MeasureDir;
  onExceeded: (volume: LimitedVolume, usedBytes: number) => void;
  onError?: (volume: LimitedVolume, error: Error) => void;
  periodMs?: number;
}

export class LocalStorageMonitor {
  private readonly options: LocalStorageOptions;
  private cancelTimer?: () => void;
  private inFlight?: Promise<void>;

  constructor(options: LocalStorageOptions) {
    this.options = options;
  }

  /** Measures every limited volume once; a check still running is joined, not doubled. */
  check(): Promise<void> {
    this.inFlight ??= this.measureAll().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** Checks every period until stop(); idempotent. */
  start(): void {
    if (this.cancelTimer) return;
    const tick = () => {
      this.cancelTimer = this.options.clock.setTimeout(tick, this.options.periodMs ?? LOCAL_STORAGE_CHECK_PERIOD_MS);
      void this.check();
    };
    this.cancelTimer = this.options.clock.setTimeout(tick, this.options.periodMs ?? LOCAL_STORAGE_CHECK_PERIOD_MS);
  }

  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private async measureAll(): Promise<void> {
    for (const volume of this.options.volumes()) {
      try {
        const usage = await this.options.measure(volume.path);
        if (usage.bytes > volume.limitBytes) this.options.onExceeded(volume, usage.bytes);
      } catch (error) {
        this.options.onError?.(volume, error as Error);
      }
    }
  }
}
