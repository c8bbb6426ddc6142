/**
 * How the process runtime notices that a container started or exited, at once and across agent
 * restarts: one directory watch on `events/`, where every monitor drops `<id>.started` and
 * `<id>.exited` (one inotify watch for any number of containers, and it works whether or not the
 * monitor is our child). Each exit is reported once per agent.
 *
 * Backstops, none of which reads a container's files while its monitor is known to be alive (so a
 * thousand sleeping containers cost nothing per relist): the monitor's exit callback while it is our
 * child; and `recheck`, the runtime's relist, which the PLEG runs on its own period (pleg/): one
 * listing of `events/` for `.exited` markers the watch did not deliver, and at most once a minute a
 * status read of the containers whose monitor is not our child (adopted from a previous agent, or
 * its monitor died first), as only that tells a monitor killed with the container still running (the
 * exit is then recorded as lost).
 */
import { readdirSync, watch, type FSWatcher } from "node:fs";
import type { Clock } from "../../clock.ts";
import type { RuntimeEvent } from "../runtime.ts";

export interface ContainerEventsOptions {
  /** The directories the monitors drop markers into: the runtime's, and an earlier version's when its monitors may still run. */
  eventsDirs: string[];
  clock: Clock;
  /** Reads whether `id` has exited (recording a lost exit when its monitor is gone). */
  hasExited: (id: string) => boolean;
}

/** How often containers without a child monitor are looked at: a monitor killed under its container is rare. */
const UNWATCHED_CHECK_MS = 60_000;

export class ContainerEvents {
  private readonly listeners = new Set<(event: RuntimeEvent) => void>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly reported = new Set<string>();
  /** Ids seen running, which the backstop re-checks; an id leaves once its exit is reported. */
  private readonly running = new Set<string>();
  /** Ids whose monitor is our live child: its exit callback reports whatever the markers miss. */
  private readonly children = new Set<string>();
  private lastUnwatchedCheck: number;
  private readonly watchers: FSWatcher[];
  private closed = false;

  constructor(private readonly options: ContainerEventsOptions) {
    this.watchers = options.eventsDirs.map((dir) => {
      const watcher = watch(dir, (_type, filename) => {
        const name = filename?.toString() ?? "";
        const dot = name.lastIndexOf(".");
        if (dot > 0) this.notify(name.slice(0, dot), name.slice(dot + 1) === "started");
      });
      watcher.on("error", () => {
        // The directory went away (root removed under us): the backstop still runs.
      });
      return watcher;
    });
    this.lastUnwatchedCheck = options.clock.now();
  }

  subscribe(listener: (event: RuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Marks `id` as running, so the backstop watches it even if its markers were missed. */
  track(id: string): void {
    if (!this.reported.has(id)) this.running.add(id);
  }

  /** `id`'s monitor is our child, whose exit callback calls `monitorExited`. */
  ownChild(id: string): void {
    this.children.add(id);
  }

  /** `id`'s monitor (our child) is gone: report the exit if there is one, and look at it once a minute after. */
  monitorExited(id: string): void {
    this.children.delete(id);
    this.notify(id);
  }

  /** Forgets `id` (removed container). */
  forget(id: string): void {
    this.running.delete(id);
    this.reported.delete(id);
    this.children.delete(id);
  }

  /** Something about `id` may have changed: wake its waiters, report a first exit. */
  notify(id: string, started = false): void {
    for (const wake of this.waiters.get(id) ?? []) wake();
    if (started) {
      this.track(id);
      this.emit({ type: "started", containerId: id });
      return;
    }
    if (this.reported.has(id) || !this.options.hasExited(id)) return;
    this.reported.add(id);
    this.running.delete(id);
    this.emit({ type: "exited", containerId: id });
  }

  /**
   * Resolves once `ready()` is true, re-checking on every notification for `id` and every
   * `pollMs` as a backstop; resolves false after `timeoutMs` on the clock.
   */
  async waitFor(id: string, ready: () => boolean, timeoutMs: number, pollMs = 50): Promise<boolean> {
    const deadline = this.options.clock.now() + timeoutMs;
    while (!ready()) {
      if (this.options.clock.now() >= deadline || this.closed) return ready();
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(id) ?? new Set();
        this.waiters.set(id, set);
        const wake = () => {
          cancel();
          set.delete(wake);
          if (set.size === 0) this.waiters.delete(id);
          resolve();
        };
        set.add(wake);
        const cancel = this.options.clock.setTimeout(wake, pollMs);
      });
    }
    return true;
  }

  /**
   * The relist: missed markers, then, once a minute, every container whose monitor is not our
   * child. Reads no container's files while every monitor is our child and no marker is new.
   */
  recheck(): void {
    if (this.closed) return;
    this.scanMarkers();
    if (this.options.clock.now() - this.lastUnwatchedCheck >= UNWATCHED_CHECK_MS) this.checkUnwatched();
  }

  /** One listing of each events directory: an `.exited` marker of a container seen running is an exit the watch missed. */
  private scanMarkers(): void {
    if (this.running.size === 0) return;
    for (const dir of this.options.eventsDirs) this.scanMarkersIn(dir);
  }

  private scanMarkersIn(dir: string): void {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // The directory went away (root removed under us): nothing to report from it.
    }
    for (const name of names) {
      if (!name.endsWith(".exited")) continue;
      const id = name.slice(0, -".exited".length);
      if (this.running.has(id)) this.notify(id);
    }
  }

  private checkUnwatched(): void {
    this.lastUnwatchedCheck = this.options.clock.now();
    for (const id of [...this.running]) if (!this.children.has(id)) this.notify(id);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of this.watchers) watcher.close();
    this.listeners.clear();
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
  }

  private emit(event: RuntimeEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // One listener's failure must not stop the others from hearing of the exit.
      }
    }
  }
}
