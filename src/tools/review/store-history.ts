/**
 * What our database knows about a pod, as review evidence: per container, its restarts, the
 * Killing and Unhealthy events (with their repeat counts, and their container, which kubectl's
 * table does not show) and how long each killed attempt had run. Read-only, through StoreReader.
 */
import type { ProbeKind } from "../../manifest/types.ts";
import type { StoreReader } from "../../store/queries.ts";
import { emptyHistory, type PodHistory } from "./history.ts";

const KIND_WORDS: Record<string, ProbeKind> = { Liveness: "liveness", Readiness: "readiness", Startup: "startup" };

/** undefined when no pod of that name was ever recorded. */
export function storeHistory(store: StoreReader, pod: string, namespace?: string): PodHistory | undefined {
  const row = store.findPod(pod, namespace);
  if (!row) return undefined;
  const history: PodHistory = new Map();
  const of = (container: string) => {
    let seen = history.get(container);
    if (!seen) history.set(container, (seen = emptyHistory()));
    return seen;
  };
  for (const status of [...(row.object.status?.initContainerStatuses ?? []), ...(row.object.status?.containerStatuses ?? [])]) {
    of(status.name).restartCount = status.restartCount ?? 0;
  }
  for (const event of store.eventsForPod(row.uid)) {
    if (event.container === "") continue;
    if (event.reason === "Killing") {
      const killed = /failed (liveness|startup) probe/.exec(event.message);
      if (killed?.[1] === "liveness") of(event.container).livenessKills += event.count;
      else if (killed?.[1] === "startup") of(event.container).startupKills += event.count;
    } else if (event.reason === "Unhealthy") {
      const kind = KIND_WORDS[/^(Liveness|Readiness|Startup) probe/.exec(event.message)?.[1] ?? ""];
      if (kind) of(event.container).unhealthy[kind] = (of(event.container).unhealthy[kind] ?? 0) + event.count;
    }
  }
  for (const [container, seen] of history) {
    const kills = seen.livenessKills + seen.startupKills;
    if (kills === 0) continue;
    // A probe kill ends the attempt by a signal (137 or 143); the latest such attempts are the kills.
    const signalled = store
      .attempts(row.uid, container)
      .filter((attempt) => attempt.startedAt !== null && attempt.finishedAt !== null && (attempt.signal !== null || (attempt.exitCode ?? 0) > 128));
    seen.killedAfterSeconds = signalled.slice(-kills).map((attempt) => Math.round((attempt.finishedAt! - attempt.startedAt!) / 1000));
  }
  return history;
}
