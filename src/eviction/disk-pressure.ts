/**
 * The eviction manager's nodefs half, without the evicting: watches the filesystems holding the
 * state database and the pods' files against `nodefs.available` and says when DiskPressure turns
 * on or off. A look is one statfs per filesystem (microseconds), taken after writes (at most once
 * a second) and every 10 s (the kubelet's eviction monitoring period), never in a busy loop.
 */
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { Clock } from "../clock.ts";
import { thresholdBytes, type ThresholdValue } from "./thresholds.ts";

export interface FilesystemUsage {
  totalBytes: bigint;
  availableBytes: bigint;
}

/** statfs of the filesystem holding `path`; throws what statfs throws. */
export type Statfs = (path: string) => FilesystemUsage;

/**
 * A directory not made yet (docker's volume root before its first emptyDir) is on the filesystem
 * of its nearest existing parent, where it will be made.
 */
export const realStatfs: Statfs = (path) => {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const fs = statfsSync(dir, { bigint: true });
      // bavail, not bfree: what an unprivileged writer (the pods) can still use, as the kubelet counts it.
      return { totalBytes: fs.blocks * fs.bsize, availableBytes: fs.bavail * fs.bsize };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dirname(dir) === dir) throw error;
    }
  }
};

/** DiskPressure as the agent holds it: the condition's status and its lastTransitionTime (epoch ms). */
export interface DiskPressureCondition {
  pressure: boolean;
  since: number;
}

/** The filesystem that crossed the threshold, for the agent's log line. */
export interface DiskObservation {
  pressure: boolean;
  /** The tightest filesystem looked at (the one under pressure, if any). */
  path: string;
  usage: FilesystemUsage;
  thresholdBytes: bigint;
}

export interface DiskPressureOptions {
  /** Directories whose filesystems are watched (the database's and the pods'); one filesystem may hold several. */
  paths: string[];
  /** nodefs.available; undefined (turned off) never reports pressure, and clears one recorded before. */
  threshold: ThresholdValue | undefined;
  clock: Clock;
  statfs?: Statfs;
  /** DiskPressure as last known (the previous agent's verdict); the first look reports a change from it. */
  initialPressure?: boolean;
  /** Called on each change of DiskPressure, the first look finding pressure included. */
  onChange: (observation: DiskObservation) => void;
  /** A path statfs refused, said once per path (a missing directory is not pressure). */
  onError?: (path: string, error: Error) => void;
  /** After every look, changed or not (a write that failed before is retried there). */
  afterCheck?: () => void;
}

export const DISK_CHECK_PERIOD_MS = 10_000;
/** After a write, a look at most this often: a burst of commits costs one statfs. */
export const DISK_CHECK_AFTER_WRITE_MS = 1000;

export class DiskPressureMonitor {
  private readonly options: DiskPressureOptions;
  private readonly statfs: Statfs;
  private pressureNow = false;
  private lastCheckAt = Number.NEGATIVE_INFINITY;
  private cancelTimer?: () => void;
  private readonly failedPaths = new Set<string>();

  constructor(options: DiskPressureOptions) {
    this.options = options;
    this.statfs = options.statfs ?? realStatfs;
    this.pressureNow = options.initialPressure ?? false;
  }

  get pressure(): boolean {
    return this.pressureNow;
  }

  /** One look at every filesystem; calls onChange when DiskPressure turned on or off. */
  check(): DiskObservation | undefined {
    const { threshold, clock } = this.options;
    this.lastCheckAt = clock.now();
    let tightest: DiskObservation | undefined;
    for (const path of this.options.paths) {
      let usage: FilesystemUsage;
      try {
        usage = this.statfs(path);
      } catch (error) {
        if (!this.failedPaths.has(path)) this.options.onError?.(path, error as Error);
        this.failedPaths.add(path);
        continue;
      }
      this.failedPaths.delete(path);
      const limit = thresholdBytes(threshold, usage.totalBytes);
      const observation = { pressure: usage.availableBytes < limit, path, usage, thresholdBytes: limit };
      if (!tightest || (observation.pressure && !tightest.pressure) || (observation.pressure === tightest.pressure && margin(observation) < margin(tightest))) {
        tightest = observation;
      }
    }
    if (tightest) {
      const changed = tightest.pressure !== this.pressureNow;
      this.pressureNow = tightest.pressure;
      if (changed) this.options.onChange(tightest);
    }
    this.options.afterCheck?.();
    return tightest;
  }

  /** Something was written: look again unless a look was taken within the last second. */
  noteWrite(): void {
    if (this.options.clock.now() - this.lastCheckAt >= DISK_CHECK_AFTER_WRITE_MS) this.check();
  }

  /** Looks now and every 10 s until stop(). Idempotent. */
  start(): void {
    if (this.cancelTimer) return;
    const tick = () => {
      this.cancelTimer = this.options.clock.setTimeout(tick, DISK_CHECK_PERIOD_MS);
      this.check();
    };
    tick();
  }

  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }
}

function margin(observation: DiskObservation): bigint {
  return observation.usage.availableBytes - observation.thresholdBytes;
}

/** `3.2Gi available of 40Gi on /var/lib/minikubelet, threshold 4Gi`, for the agent's log line. */
export function describeObservation(observation: DiskObservation): string {
  const { usage, path } = observation;
  return `${gibibytes(usage.availableBytes)} available of ${gibibytes(usage.totalBytes)} on the filesystem of ${path}, threshold ${gibibytes(observation.thresholdBytes)}`;
}

function gibibytes(bytes: bigint): string {
  return `${(Number(bytes) / 2 ** 30).toFixed(1)}Gi`;
}
