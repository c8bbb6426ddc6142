/**
 * `minikubelet describe pod NAME [-n NS]`: kubectl's describe layout from the state database,
 * for a live pod or, when none is live, the most recently deleted one of that name.
 */
import { realClock, type Clock } from "../clock.ts";
import { AmbiguousPodError } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { agentNotRunningNote } from "../store/agent-status.ts";
import { UsageError, UserError } from "./cli.ts";
import { describePodText } from "./describe-pod.ts";

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

export async function describeCommand(resource: string, name: string, options: DescribeOptions, deps: DescribeDeps = {}): Promise<number> {
  if (!POD_RESOURCES.has(resource.toLowerCase())) {
    throw new UsageError(`unknown resource type "${resource}"; minikubelet describes only pods (pod, pods, po)`);
  }
  const { clock = realClock, stdout = (text) => process.stdout.write(text), stderr = (text) => process.stderr.write(text) } = deps;
  using reader = openStoreReader(options.db);
  let row;
  try {
    row = reader.store.findPod(name, options.namespace);
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
  const where = options.namespace === undefined ? "" : ` in namespace "${options.namespace}"`;
  if (!row) throw new UserError(`pods "${name}" not found${where} in ${reader.path}`);
  const record = reader.store.podRecord(row.uid);
  if (!record) throw new UserError(`pods "${name}" has no record in ${reader.path}`);
  const note = agentNotRunningNote(reader.path, reader.store, clock.now());
  if (note) stderr(`${note}\n`);
  stdout(
    describePodText({
      pod: row.object,
      spec: record.spec,
      events: reader.store.eventsForPod(row.uid),
      attempts: reader.store.attempts(row.uid),
      now: clock.now(),
      deleted: row.deletedAt === null ? undefined : { at: row.deletedAt, cause: record.deletionCause },
      utcOffsetMinutes: deps.utcOffsetMinutes,
    }),
  );
  return 0;
}
