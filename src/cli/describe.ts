/**
 * `minikubelet describe pod NAME [-n NS]`: kubectl's describe layout from the state database,
 * for a live pod or, when none is live, the most recently deleted one of that name.
 */
import { realClock, type Clock } from "../clock.ts";
import { AmbiguousPodError } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { UsageError, UserError } from "./cli.ts";
import { describePodText } from "./describe-pod.ts";
import { describeRefusedText } from "./describe-refused.ts";

export interface DescribeOptions {
  db?: string;
  namespace?: string;
}

export interface DescribeDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  utcOffsetMinutes?: number;
}

const POD_RESOURCES = new Set(["pod", "pods", "po"]);

export async function describeCommand(resource: string, name: string, options: DescribeOptions, deps: DescribeDeps = {}): Promise<number> {
  if (!POD_RESOURCES.has(resource.toLowerCase())) {
    throw new UsageError(`unknown resource type "${resource}"; minikubelet describes only pods (pod, pods, po)`);
  }
  const { clock = realClock, stdout = (text) => process.stdout.write(text) } = deps;
  using reader = openStoreReader(options.db);
  let row;
  try {
    row = reader.store.findPod(name, options.namespace);
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
  const where = options.namespace === undefined ? "" : ` in namespace "${options.namespace}"`;
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
  if (!row) throw new UserError(`pods "${name}" not found${where} in ${reader.path}`);
  const record = reader.store.podRecord(row.uid);
  if (!record) throw new UserError(`pods "${name}" has no record in ${reader.path}`);
  stdout(
    describePodText({
      pod: row.object,
      spec: record.spec,
      events: reader.store.eventsForPod(row.uid),
      attempts: reader.store.attempts(row.uid),
      now: clock.now(),
      utcOffsetMinutes: deps.utcOffsetMinutes,
    }),
  );
  return 0;
}
