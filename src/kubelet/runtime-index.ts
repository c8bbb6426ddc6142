/**
 * Which pod a runtime id (container or sandbox) belongs to, and what the runtime said about ids
 * between passes: the routing half of an event-driven PLEG.
 */
import type { PodKey } from "../manifest/types.ts";
import type { RuntimeEvent } from "../runtime/runtime.ts";

/** Untracked ids remembered for a start call still returning; far more than starts in flight. */
const MAX_EARLY_EVENTS = 256;

export class RuntimeIndex {
  private readonly owners = new Map<string, PodKey>();
  /**
   * Ids the runtime reported exited before the loop knew them: a container that exits at once can be
   * reported while startContainer is still returning its id. An early start is not kept: the start
   * call reports it itself, and syncing the pod again for it costs every start a pass. Bounded: ids
   * never tracked age out.
   */
  private readonly early = new Set<string>();
  /** Tracked ids the runtime reported started; a pod's are consumed by its next sync (runtime-restarts.ts). */
  readonly startedIds = new Set<string>();
  /** Pods whose sandbox may have died (an event about it, the runtime back from an outage). */
  readonly sandboxSuspects = new Set<PodKey>();

  /** Records the owner of `id`; true when its exit came in before (the pod should sync). */
  track(id: string, key: PodKey): boolean {
    this.owners.set(id, key);
    return this.early.delete(id);
  }

  untrack(id: string): void {
    this.owners.delete(id);
    this.startedIds.delete(id);
  }

  /** Files a container event; returns the pod to sync, if the id is known. */
  route(event: Exclude<RuntimeEvent, { type: "health" }>, sandboxOf: (key: PodKey) => string | undefined): PodKey | undefined {
    const key = this.owners.get(event.containerId);
    if (!key) {
      if (event.type !== "exited") return undefined;
      this.early.add(event.containerId);
      if (this.early.size > MAX_EARLY_EVENTS) this.early.delete(this.early.values().next().value!);
      return undefined;
    }
    if (sandboxOf(key) === event.containerId) {
      if (event.type === "exited") this.sandboxSuspects.add(key);
    } else if (event.type === "started") {
      this.startedIds.add(event.containerId);
    }
    return key;
  }
}
