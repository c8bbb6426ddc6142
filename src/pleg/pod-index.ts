/**
 * Which pod a runtime id (container or sandbox) belongs to: the routing half of the PLEG. The
 * runtime's events name a container id only; the loop tells the index which ids are whose.
 */
import type { PodKey } from "../manifest/types.ts";
import type { TrackedKind } from "./pleg.ts";

/** Untracked ids remembered for a start call still returning; far more than starts in flight. */
const MAX_EARLY_EXITS = 256;

export class PodIndex {
  private readonly owners = new Map<string, { podKey: PodKey; kind: TrackedKind }>();
  /**
   * Ids the runtime reported exited before the loop knew them: a container that exits at once can be
   * reported while startContainer is still returning its id. An early start is not kept: the start
   * call reports it itself, and syncing the pod again for it costs every start a pass. Bounded: ids
   * never tracked age out.
   */
  private readonly early = new Set<string>();

  /** Records the owner of `id`; true when its exit came in before (the pod should hear of it). */
  track(id: string, podKey: PodKey, kind: TrackedKind): boolean {
    this.owners.set(id, { podKey, kind });
    return this.early.delete(id);
  }

  untrack(id: string): void {
    this.owners.delete(id);
  }

  /** The owner of `id`, if tracked; an untracked exit is remembered for a `track` that may follow. */
  route(id: string, exited: boolean): { podKey: PodKey; kind: TrackedKind } | undefined {
    const owner = this.owners.get(id);
    if (owner || !exited) return owner;
    this.early.add(id);
    if (this.early.size > MAX_EARLY_EXITS) this.early.delete(this.early.values().next().value!);
    return undefined;
  }

  /** Whether anything tracked is `id`. */
  has(id: string): boolean {
    return this.owners.has(id);
  }
}
