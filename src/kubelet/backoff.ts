/**
 * The kubelet's container restart back-off: a pure delay curve plus a keyed store of entries.
 * The first restart is immediate, then `base`, doubling to `cap`, measured from the container's finish.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import type { Clock } from "../clock.ts";

export interface BackoffOptions {
  /** Seconds to wait before the second restart. Default 10, like the kubelet. */
  baseSeconds?: number;
  /** Longest wait in seconds. Default 300, like the kubelet. */
  capSeconds?: number;
}

export class BackoffOptionError extends Error {
  override readonly name = "BackoffOptionError";
}

export interface BackoffSettings {
  baseMs: number;
  capMs: number;
}

/** The kubelet's own curve: 10 s, doubling to 5 minutes (its backOffPeriod and MaxContainerBackOff). */
export const DEFAULT_BACKOFF_SECONDS = { base: 10, cap: 300 } as const;
export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: DEFAULT_BACKOFF_SECONDS.base * 1000, capMs: DEFAULT_BACKOFF_SECONDS.cap * 1000 };

/** Validates the options up front, so a bad flag fails at start, naming the option and the value. */
export function backoffSettings(options: BackoffOptions = {}): BackoffSettings {
  const base = options.baseSeconds ?? DEFAULT_BACKOFF_SECONDS.base;
  const cap = options.capSeconds ?? DEFAULT_BACKOFF_SECONDS.cap;
  if (!Number.isFinite(base) || base <= 0) {
    throw new BackoffOptionError(`--backoff-base must be a number of seconds above 0 (got ${base})`);
  }
  if (!Number.isFinite(cap) || cap <= 0) {
    throw new BackoffOptionError(`--backoff-max must be a number of seconds above 0 (got ${cap})`);
  }
  // A node cap below the base also lowers the first wait, as the kubelet does since 1.35.
  return { baseMs: Math.min(base, cap) * 1000, capMs: cap * 1000 };
}

/** The wait before restart number `restart` (1-based) of a container that keeps crashing at once. */
export function restartDelayMs(restart: number, settings: BackoffSettings): number {
  if (restart <= 1) return 0;
  return cappedDoubling(settings.baseMs, settings.capMs, restart - 2);
}

export interface BackoffRow {
  restart: number;
  waitMs: number;
  sinceFirstCrashMs: number;
}

/** The schedule `minikubelet backoff` prints, for a container that crashes the moment it starts. */
export function backoffSchedule(settings: BackoffSettings, rows = 9): BackoffRow[] {
  const schedule: BackoffRow[] = [];
  let since = 0;
  for (let restart = 1; restart <= rows; restart++) {
    const waitMs = restartDelayMs(restart, settings);
    since += waitMs;
    schedule.push({ restart, waitMs, sinceFirstCrashMs: since });
  }
  return schedule;
}

/** One key per (pod uid, container name), as the kubelet keys its back-off. */
export type BackoffKey = string;

export function backoffKey(podUid: string, container: string): BackoffKey {
  return `${podUid}/${container}`;
}

function podUidOf(key: BackoffKey): string {
  return key.slice(0, key.indexOf("/"));
}

export interface BackoffEntry {
  key: BackoffKey;
  /** The wait that applies to the next crash. */
  delayMs: number;
  /** When the delay was last raised (the last restart). */
  updatedAt: number;
}

/**
 * Whether a crash at `finishedAt` finds the entry forgotten. After 2 x cap of clean running we
 * restart the back-off factor, like the kubelet: a container that crashes once a week should not
 * wait five minutes because it crashed often last month.
 */
export function backoffForgotten(entry: Pick<BackoffEntry, "updatedAt">, finishedAt: number, settings: BackoffSettings): boolean {
  return finishedAt - entry.updatedAt > 2 * settings.capMs;
}

export class BackoffStore {
  private readonly entries = new Map<BackoffKey, BackoffEntry>();
  /** Keys by pod uid, so a pod's checkpoint and removal cost its own entries, not every pod's. */
  private readonly byPod = new Map<string, Set<BackoffKey>>();

  constructor(
    private readonly clock: Clock,
    readonly settings: BackoffSettings,
  ) {}

  /**
   * Milliseconds still to wait before restarting a container that finished at `finishedAt`, or 0.
   * No entry means the first crash: restart at once.
   */
  remainingMs(key: BackoffKey, finishedAt: number): number {
    const entry = this.live(key, finishedAt);
    if (!entry) return 0;
    return Math.max(0, finishedAt + entry.delayMs - this.clock.now());
  }

  /**
   * Records a restart: the next crash waits `base`, or twice the previous wait, up to the cap.
   * `restartedAt` is when the restart happened (now, unless one made by a previous agent is replayed).
   */
  next(key: BackoffKey, finishedAt: number, restartedAt = this.clock.now()): BackoffEntry {
    const entry = this.live(key, finishedAt);
    const delayMs = entry ? cappedDoubling(entry.delayMs, this.settings.capMs, 1) : this.settings.baseMs;
    const updated = { key, delayMs, updatedAt: restartedAt };
    this.set(updated);
    return updated;
  }

  get(key: BackoffKey): BackoffEntry | undefined {
    return this.entries.get(key);
  }

  forget(key: BackoffKey): void {
    this.entries.delete(key);
    const keys = this.byPod.get(podUidOf(key));
    keys?.delete(key);
    if (keys?.size === 0) this.byPod.delete(podUidOf(key));
  }

  all(): BackoffEntry[] {
    return [...this.entries.values()];
  }

  /** The entries of one pod (keys made by backoffKey with its uid). */
  forPod(podUid: string): BackoffEntry[] {
    return [...(this.byPod.get(podUid) ?? [])].map((key) => this.entries.get(key)!);
  }

  forgetPod(podUid: string): void {
    for (const key of [...(this.byPod.get(podUid) ?? [])]) this.forget(key);
  }

  /** Reloads entries from a checkpoint (after an agent restart), so the curve is not reset. */
  restore(entries: Iterable<BackoffEntry>): void {
    for (const entry of entries) this.set({ ...entry });
  }

  private set(entry: BackoffEntry): void {
    this.entries.set(entry.key, entry);
    const uid = podUidOf(entry.key);
    const keys = this.byPod.get(uid) ?? new Set<BackoffKey>();
    keys.add(entry.key);
    this.byPod.set(uid, keys);
  }

  private live(key: BackoffKey, finishedAt: number): BackoffEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (backoffForgotten(entry, finishedAt, this.settings)) {
      this.forget(key);
      return undefined;
    }
    return entry;
  }
}
