/**
 * The relist of a runtime that has none of its own: two listings apart, what started and what
 * died, like the generic PLEG's comparison of its old and new pod records. What the event streams
 * said in between counts as seen, so a relist repeats nothing they reported.
 */
import type { ContainerInfo, RuntimeEvent, SandboxInfo } from "../runtime/runtime.ts";

export class RelistDiff {
  /** Each id's last known state (true: running), from the last listing and the streams since. */
  private readonly seen = new Map<string, boolean>();

  /** A stream reported `id` running or not. */
  heard(id: string, running: boolean): void {
    this.seen.set(id, running);
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  /**
   * The events a new listing implies: a container or sandbox seen running that now is not (or is
   * gone) died; one seen stopped that runs again started. One never seen before is reported only
   * when it is not running: its exit may be the one a stream missed, and its start its own start
   * call reported.
   */
  relisted(containers: readonly ContainerInfo[], sandboxes: readonly SandboxInfo[]): RuntimeEvent[] {
    const now = new Map<string, boolean>();
    for (const container of containers) now.set(container.id, container.state === "running" || container.state === "created");
    for (const sandbox of sandboxes) now.set(sandbox.id, sandbox.ready);
    const events: RuntimeEvent[] = [];
    for (const [id, running] of now) {
      const before = this.seen.get(id);
      if (before === undefined ? !running : before !== running) events.push({ type: running ? "started" : "exited", containerId: id });
    }
    for (const [id, running] of this.seen) if (running && !now.has(id)) events.push({ type: "exited", containerId: id });
    this.seen.clear();
    for (const [id, running] of now) this.seen.set(id, running);
    return events;
  }
}
