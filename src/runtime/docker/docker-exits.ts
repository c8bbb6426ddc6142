/**
 * Exits as the engine's event stream tells them, so the runtime answers a container's status the
 * moment its `die` event arrives. An inspect sent then would wait: the engine holds the container's
 * lock from before it sends `die` until it has cleaned the container up (unmounts, logs closed, its
 * state written to disk), and answers `docker kill` itself only then (measured here: 5-25 ms for a
 * container in a pod, over 100 ms for one with its own network, both under load).
 *
 * What a record holds is what an inspect would say, from the same sources: the exit code is the
 * `die` event's; OOMKilled is an `oom` event for the container before its `die` (the engine's
 * containerd client sets one flag for both the event and State.OOMKilled, and sends them in that
 * order); the start time is the one an inspect read while the container ran (the runtime reads it
 * after each start it makes). One thing differs: the
 * finish time is the `die` event's, which trails the engine's FinishedAt by the time the engine took
 * to reap the task (tens of ms). Without a start time read earlier there is no record, and the
 * runtime inspects as it always did.
 */
import type { ContainerStatus } from "../runtime.ts";

/** Ids remembered at most, per map: far more than containers that exit between two passes. */
const MAX_REMEMBERED = 4096;

interface Exit {
  exitCode: number;
  finishedAt: number;
  oomKilled: boolean;
}

export class DockerExitRecords {
  private readonly startedAt = new Map<string, number>();
  private readonly exits = new Map<string, Exit>();
  private readonly oomKilled = new Set<string>();

  /** An inspect saw the container running since `startedAt`. */
  running(id: string, startedAt: number): void {
    remember(this.startedAt, id, startedAt);
  }

  /** The engine started the container; after an exit of it, this is a run an inspect has not seen yet. */
  started(id: string): void {
    if (!this.exits.delete(id)) return;
    this.startedAt.delete(id);
    this.oomKilled.delete(id);
  }

  oom(id: string): void {
    this.oomKilled.add(id);
    if (this.oomKilled.size > MAX_REMEMBERED) this.oomKilled.delete(this.oomKilled.values().next().value!);
  }

  died(id: string, exitCode: number, at: number): void {
    remember(this.exits, id, { exitCode, finishedAt: at, oomKilled: this.oomKilled.delete(id) });
  }

  /** The exited status of `id`, when both its exit and its start time are known. */
  status(id: string): ContainerStatus | undefined {
    const exit = this.exits.get(id);
    const startedAt = this.startedAt.get(id);
    if (!exit || startedAt === undefined) return undefined;
    const status: ContainerStatus = { id, state: "exited", startedAt, exitCode: exit.exitCode, finishedAt: Math.max(exit.finishedAt, startedAt) };
    if (exit.oomKilled) status.reason = "OOMKilled";
    return status;
  }

  forget(id: string): void {
    this.startedAt.delete(id);
    this.exits.delete(id);
    this.oomKilled.delete(id);
  }

  /** Events may have been missed (the stream broke): nothing remembered can be trusted. */
  clear(): void {
    this.startedAt.clear();
    this.exits.clear();
    this.oomKilled.clear();
  }
}

function remember<T>(map: Map<string, T>, id: string, value: T): void {
  map.delete(id); // to the end of the insertion order
  map.set(id, value);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value!);
}
