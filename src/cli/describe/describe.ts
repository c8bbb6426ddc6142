/**
 * `minikubelet describe pod NAME [-n NS]`: kubectl's describe layout from the state database,
 * for a live pod or, when none is live, the most recently deleted one of that name.
 */
import { realClock, type Clock } from "../../clock.ts";
import { AmbiguousPodError } from "../../store/queries.ts";
import { newestPodEvents } from "../../store/event-reads.ts";
import { openStoreReader } from "../../store/reader.ts";
import { agentNotRunningNote } from "../../store/agent-status.ts";
import { UsageError, UserError } from "../errors.ts";
import { describePodText } from "./describe-pod.ts";
import { podNotFound } from "../pod-not-found.ts";
import { describeRefusedText } from "./describe-refused.ts";
import { writeStderr, writeStdout } from "../stdio.ts";

export interface DescribeOptions {
  db?: string;
  namespace?: string;
}

export interface DescribeDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  utcOffsetMinutes?: number;
}

const POD_RESOURCES = new Set(["pod", "pods", "po"]);

/**
 * The newest events describe shows: a crash-looping pod's dozen or so kinds of event, repeats
 * counted, fit many times over; a pod with half a million distinct events is read in bounded time.
 */
export const DESCRIBED_EVENTS = 50;

/** `describe pod NAME`, `describe pods NAME`, `describe pod/NAME` and `describe NAME` (a pod), like kubectl. */
export async function describeCommand(resource: string, nameArgument: string | undefined, options: DescribeOptions, deps: DescribeDeps = {}): Promise<number> {
  const name = describedPod(resource, nameArgument);
  const { clock = realClock, stdout = writeStdout, stderr = writeStderr } = deps;
  using reader = openStoreReader(options.db);
  let row;
  try {
    row = reader.store.findPod(name, options.namespace);
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
  // A refused manifest file shows in place of a pod that no longer runs (or never ran) under its name.
  if (!row || row.deletedAt !== null) {
    const refused = reader.store.refusedPods({ namespace: options.namespace, name });
    if (refused.length > 1) throw new UserError(`pod "${name}" exists in several namespaces (${refused.map((r) => r.namespace).join(", ")}); choose one with -n`);
    if (refused[0]) {
      const events = reader.store.eventsForPod(refused[0].uid);
      stdout(describeRefusedText({ row: refused[0], events, now: clock.now(), utcOffsetMinutes: deps.utcOffsetMinutes }));
      return 0;
    }
  }
  if (!row) throw podNotFound(reader.store, reader.path, name, { includeDeleted: true });
  const record = reader.store.podRecord(row.uid);
  if (!record) throw new UserError(`pods "${name}" has no record in ${reader.path}`);
  const note = agentNotRunningNote(reader.path, reader.store, clock.now());
  if (note) stderr(`${note}\n`);
  const { events, total } = newestPodEvents(reader.store.db, row.uid, DESCRIBED_EVENTS);
  stdout(
    describePodText({
      pod: row.object,
      spec: record.spec,
      events,
      eventTotal: total,
      attempts: reader.store.attempts(row.uid),
      now: clock.now(),
      deleted: row.deletedAt === null ? undefined : { at: row.deletedAt, cause: record.deletionCause },
      utcOffsetMinutes: deps.utcOffsetMinutes,
    }),
  );
  return 0;
}

function describedPod(resource: string, name: string | undefined): string {
  const slash = resource.indexOf("/");
  const [type, inlineName] = slash < 0 ? [resource, undefined] : [resource.slice(0, slash), resource.slice(slash + 1)];
  if (name === undefined && inlineName === undefined) {
    if (POD_RESOURCES.has(type.toLowerCase())) throw new UsageError(`describe ${resource} needs a pod NAME`);
    return resource;
  }
  if (!POD_RESOURCES.has(type.toLowerCase())) {
    throw new UsageError(`unknown resource type "${type}"; minikubelet describes only pods (pod, pods, po)`);
  }
  if (inlineName === undefined) return name!;
  if (name !== undefined) throw new UsageError(`give the pod either as ${resource} or as a separate NAME, not both`);
  if (inlineName === "") throw new UsageError(`"${resource}" names no pod`);
  return inlineName;
}
