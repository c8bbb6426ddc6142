/**
 * `minikubelet timeline POD [-c CONTAINER] [-o text|svg|FILE.svg] [--width N]`: the pod's restart
 * history on a time axis, read from the state database like `describe`: one row per container,
 * a bar per attempt, back-off waits, probe failures and readiness changes.
 */
import { realClock, type Clock } from "../clock.ts";
import { AmbiguousPodError, type StoreReader } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { writeAtomic } from "../runtime/process/process-files.ts";
import { allContainers, type PodRecord } from "../kubelet/pod-state.ts";
import { timelineContainers } from "../tools/timeline/endings.ts";
import type { TimelineContainer } from "../tools/timeline/model.ts";
import { restartNote } from "../tools/timeline/restart-note.ts";
import { MIN_WIDTH } from "../tools/timeline/frame.ts";
import { timelineText } from "../tools/timeline/render-text.ts";
import { agentNotRunningNote } from "../store/agent-status.ts";
import { timelineSvg } from "../tools/timeline/render-svg.ts";
import { UsageError, UserError } from "./errors.ts";
import { podNotFound } from "./pod-not-found.ts";

export interface TimelineOptions {
  db?: string;
  namespace?: string;
  container?: string;
  output?: string;
  width?: unknown;
}

export interface TimelineDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** The terminal's width, when stdout is one (colour and fitting follow it). */
  terminalColumns?: number;
  env?: Record<string, string | undefined>;
  utcOffsetMinutes?: number;
}

/** More attempts per container than the widest picture can draw: the rest are counted, not read. */
const ATTEMPTS_READ = 100;
const DEFAULT_WIDTH = { pipe: 100, svg: 120 } as const;
const TERMINAL_WIDTH = { min: 80, max: 200 } as const;

export async function timelineCommand(podName: string, options: TimelineOptions, deps: TimelineDeps = {}): Promise<number> {
  const { clock = realClock, stdout = (text) => process.stdout.write(text), stderr = (text) => process.stderr.write(text), env = process.env } = deps;
  const terminalColumns = "terminalColumns" in deps ? deps.terminalColumns : process.stdout.isTTY ? process.stdout.columns : undefined;
  const output = outputOption(options.output);
  const explicitWidth = options.width === undefined ? undefined : widthOption(options.width);
  using reader = openStoreReader(options.db);
  const pod = findPod(reader.store, podName, options.namespace);
  if (!pod) throw podNotFound(reader.store, reader.path, podName, { includeDeleted: true });
  const record = reader.store.podRecord(pod.uid);
  if (!record) throw new UserError(`pods "${podName}" has no record in ${reader.path}`);
  const now = pod.deletedAt ?? clock.now();
  const containers = readContainers(reader.store, pod.uid, record, options.container, podName, now);
  // Without an agent the bars still reach now: the pods outlive it, but nobody has looked since.
  const note = pod.deletedAt === null ? agentNotRunningNote(reader.path, reader.store, now) : undefined;
  if (note) stderr(`${note}\n`);
  const utcOffsetMinutes = deps.utcOffsetMinutes ?? -new Date(now).getTimezoneOffset();
  const picture = { pod: `${pod.namespace}/${pod.name}`, containers, now, ended: pod.deletedAt === null ? "now" : "deleted", utcOffsetMinutes } as const;
  if (output.format === "text") {
    const width = explicitWidth ?? (terminalColumns === undefined ? DEFAULT_WIDTH.pipe : Math.min(TERMINAL_WIDTH.max, Math.max(TERMINAL_WIDTH.min, terminalColumns)));
    const color = terminalColumns !== undefined && !env.NO_COLOR;
    stdout(timelineText({ ...picture, width, color }));
    return 0;
  }
  const svg = timelineSvg({ ...picture, width: explicitWidth ?? DEFAULT_WIDTH.svg });
  if (!output.file) stdout(svg);
  else {
    try {
      writeAtomic(output.file, svg);
    } catch (error) {
      throw new UserError(`-o ${output.file}: ${(error as NodeJS.ErrnoException).code ?? error}: the picture was not written`, { cause: error });
    }
  }
  return 0;
}

function findPod(store: StoreReader, name: string, namespace: string | undefined) {
  try {
    return store.findPod(name, namespace);
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
}

function readContainers(store: StoreReader, podUid: string, record: PodRecord, only: string | undefined, podName: string, now: number): TimelineContainer[] {
  const records = allContainers(record);
  if (only !== undefined && !records.some((container) => container.name === only)) throw new UserError(`container ${only} is not valid for pod ${podName}`);
  const histories = records
    .filter((container) => only === undefined || container.name === only)
    .map((container) => {
      const { attempts, total } = store.latestAttempts(podUid, container.name, ATTEMPTS_READ);
      return { name: container.name, kind: container.kind, attempts, totalAttempts: total, waitingNow: container.waiting?.reason === "CrashLoopBackOff" };
    });
  const containers = timelineContainers(histories, store.eventsForPod(podUid), now);
  for (const container of containers) {
    const spec = records.find((r) => r.name === container.name)!.spec;
    const note = restartNote({ ...container, spec, podPolicy: record.spec.restartPolicy });
    if (note) container.restartNote = note;
  }
  return containers;
}

/** `-o text`, `-o svg` (to stdout), or `-o FILE.svg` (written atomically). */
function outputOption(value: unknown): { format: "text" | "svg"; file?: string } {
  if (value === undefined || value === "text") return { format: "text" };
  if (value === "svg") return { format: "svg" };
  if (typeof value === "string" && value.toLowerCase().endsWith(".svg")) return { format: "svg", file: value };
  throw new UsageError(`-o must be text, svg, or a file name ending in .svg (got ${JSON.stringify(value)})`);
}

function widthOption(value: unknown): number {
  const width = Number(value);
  if (!Number.isInteger(width) || width < MIN_WIDTH || width > 1000) {
    throw new UsageError(`--width must be a whole number of columns from ${MIN_WIDTH} to 1000 (got ${JSON.stringify(value)})`);
  }
  return width;
}
