/**
 * The I/O half of `triage`: reads one pod's facts from the database (its v1 status, the agent's
 * record for kinds and probes, attempts, events, the back-off entry) and the last lines of the
 * ended attempt's output (src/logs/), read-only, like `describe` and `logs`.
 */
import { StringDecoder } from "node:string_decoder";
import type { Clock } from "../../clock.ts";
import type { BackoffSettings } from "../../kubelet/backoff.ts";
import type { BackoffSource } from "./backoff-outlook.ts";
import type { PodRecord } from "../../kubelet/pod-state.ts";
import { writeAttemptLogs } from "../../logs/attempt-logs.ts";
import { statusColumns } from "../../printers/pod-printer.ts";
import type { AttemptRow, EventRow, PodRow, StoreReader } from "../../store/queries.ts";
import { endedAttempt } from "./ended-attempt.ts";
import type { ContainerFacts, EventFact, PreviousLog, TriageFacts } from "./facts.ts";

/** How many of the ended attempt's last lines the report quotes. */
export const LOG_LINES = 10;

/** Reads an attempt's output when no log file is recorded for it (docker's engine). */
export type EngineLogReader = (attempt: AttemptRow) => Promise<string>;

export interface GatherOptions {
  backoffSettings: BackoffSettings;
  backoffSource: BackoffSource;
  commandFlags: string;
  clock: Clock;
  readEngineLogs?: EngineLogReader;
}

/** Every container's facts, init containers (sidecars included) first, as the agent recorded them. */
export function containerFacts(store: StoreReader, pod: PodRow, record: PodRecord): ContainerFacts[] {
  const statuses = [...(pod.object.status?.initContainerStatuses ?? []), ...(pod.object.status?.containerStatuses ?? [])];
  const events = store.eventsForPod(pod.uid).map(eventFact);
  return [...record.init, ...record.app].map((container) => {
    const { spec } = container;
    const facts: ContainerFacts = {
      name: container.name,
      kind: container.kind === "sidecar" ? "sidecar" : container.kind === "init" ? "init" : "app",
      image: spec.image,
      command: [...spec.command, ...spec.args],
      probes: { startup: spec.startupProbe !== undefined, liveness: spec.livenessProbe !== undefined, readiness: spec.readinessProbe !== undefined },
      status: statuses.find((s) => s.name === container.name),
      attempts: store.attempts(pod.uid, container.name).map(({ attempt, runtimeId, startedAt, finishedAt, exitCode, reason, signal }) => ({ attempt, runtimeId, startedAt, finishedAt, exitCode, reason, signal })),
      events: events.filter((e) => e.container === container.name).map((e) => e.fact),
    };
    // A sidecar's Always marks it a sidecar; it is not a policy that triage explains.
    if (spec.restartPolicy && container.kind !== "sidecar") facts.restartPolicy = spec.restartPolicy;
    if (spec.restartPolicyRules) facts.restartPolicyRules = spec.restartPolicyRules;
    const backoff = store.backoffEntry(pod.uid, container.name);
    if (backoff) facts.backoff = backoff;
    return facts;
  });
}

function eventFact(row: EventRow): { container: string; fact: EventFact } {
  const { type, reason, message, count, firstAt, lastAt } = row;
  return { container: row.container, fact: { type, reason, message, count, firstAt, lastAt } };
}

/** The facts for `container` of `pod`, with the last lines of its ended attempt's output. */
export async function gatherFacts(store: StoreReader, pod: PodRow, record: PodRecord, containers: ContainerFacts[], container: string, options: GatherOptions): Promise<TriageFacts> {
  const facts: TriageFacts = {
    now: options.clock.now(),
    pod: {
      namespace: pod.namespace,
      name: pod.name,
      uid: pod.uid,
      phase: pod.object.status?.phase ?? record.phase,
      statusColumn: statusColumns(pod.object).status,
      restartPolicy: record.spec.restartPolicy,
      initialized: record.initialized,
      ...(pod.deletedAt !== null && { deletedAt: pod.deletedAt }),
    },
    podEvents: store.eventsForPod(pod.uid).filter((e) => e.container === "").map((e) => eventFact(e).fact),
    containers,
    container,
    backoffSettings: options.backoffSettings,
    backoffSource: options.backoffSource,
    commandFlags: options.commandFlags,
  };
  const ended = endedAttempt(containers.find((c) => c.name === container)!);
  const row = ended?.attempt && store.attempts(pod.uid, container).find((a) => a.attempt === ended.attempt!.attempt);
  if (row && row.runtimeId !== "") facts.previousLog = await lastLines(row, store, options, pod.deletedAt !== null);
  return facts;
}

async function lastLines(attempt: AttemptRow, store: StoreReader, options: GatherOptions, podDeleted: boolean): Promise<PreviousLog> {
  let text = "";
  try {
    if (attempt.logPath) {
      const utf8 = new StringDecoder("utf8");
      await writeAttemptLogs(attempt, { tailLines: LOG_LINES }, { store, clock: options.clock, signal: new AbortController().signal }, (bytes) => void (text += utf8.write(Buffer.from(bytes))));
      text += utf8.end();
    } else if (options.readEngineLogs) {
      text = await options.readEngineLogs(attempt);
    } else {
      return { attempt: attempt.attempt, unavailable: "no log file is recorded for it" };
    }
  } catch (error) {
    if (podDeleted) return { attempt: attempt.attempt, unavailable: "removed with the deleted pod's containers" };
    return { attempt: attempt.attempt, unavailable: `not readable (${(error as Error).message})` };
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return { attempt: attempt.attempt, lines: lines.slice(-LOG_LINES) };
}
