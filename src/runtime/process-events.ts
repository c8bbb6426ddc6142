/**
 * How the process runtime notices that a container started or exited, at once and across agent
 * restarts: one directory watch on `events/`, where every monitor drops `<id>.started` and
 * `<id>.exited` (one inotify watch for any number of containers, and it works whether or not the
 * monitor is our child). The monitor's exit callback, while it is our child, and a slow periodic
 * re-check of the containers seen running are backstops. Each exit is reported once per agent.
 */
import { watch, type FSWatcher } from "node:fs";
import type { Clock } from "../clock.ts";
import type { RuntimeEvent } from "./runtime.ts";

export interface ContainerEventsOptions {
  eventsDir: string;
  clock: Clock;
  /** Period of the backstop re-check. */
  resyncMs: number;
  /** Reads whether `id` has exited (recording a lost exit when its monitor is gone). */
  hasExited: (id: string) => boolean;
}

export class ContainerEvents {
  private readonly listeners = new Set<(event: RuntimeEvent) => void>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly reported = new Set<string>();
  /** Ids seen running, which the backstop re-checks; an id leaves once its exit is reported. */
  private readonly running = new Set<string>();
  private readonly watcher: FSWatcher | undefined;
  private cancelResync: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: ContainerEventsOptions) {
    this.watcher = watch(options.eventsDir, (_type, filename) => {
      const name = filename?.toString() ?? "";
      const dot = name.lastIndexOf(".");
      if (dot > 0) this.notify(name.slice(0, dot), name.slice(dot + 1) === "started");
    });
    this.watcher.on("error", () => {
      // The directory went away (root removed under us): the backstop still runs.
    });
    this.armResync();
  }

  subscribe(listener: (event: RuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Marks `id` as running, so the backstop watches it even if its markers were missed. */
  track(id: string): void {
    if (!this.reported.has(id)) this.running.add(id);
  }

  /** Forgets `id` (removed container). */
  forget(id: string): void {
    this.running.delete(id);
    this.reported.delete(id);
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

  /** The backstop: one pass over the containers seen running. Exposed for tests. */
  recheck(): void {
    for (const id of [...this.running]) this.notify(id);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    this.cancelResync?.();
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

  private armResync(): void {
    this.cancelResync = this.options.clock.setTimeout(() => {
      if (this.closed) return;
      this.recheck();
      this.armResync();
    }, this.options.resyncMs);
  }
}
