/**
 * `minikubelet events [--for pod/NAME] [--types Warning,Normal] [-o json|yaml] [-w]`: the
 * kubelet's events from the state database, oldest last-seen first, like `kubectl events`.
 * `-w` keeps polling the events' revision and prints each new or repeated event as a row.
 */
import { realClock, sleep, type Clock } from "../../clock.ts";
import type { EventFilter } from "../../store/queries.ts";
import { eventCellBounds, streamEvents } from "../../store/event-reads.ts";
import { openStoreReader } from "../../store/reader.ts";
import { UsageError } from "../errors.ts";
import { formatEventRows } from "./events-format.ts";
import { writeEventList, writeEventTable, type TextSink } from "./events-stream.ts";
import { stdoutSink } from "../stdout-sink.ts";

export interface EventsOptions {
  db?: string;
  for?: string;
  namespace?: unknown;
  allNamespaces?: boolean;
  types?: string;
  output?: string;
  watch?: boolean;
}

export interface EventsDeps {
  clock?: Clock;
  /** Takes output; a promise holds the listing back until it is taken (default: stdout, with its back-pressure). */
  stdout?: TextSink;
  stderr?: (text: string) => void;
  /** Ends `-w` (default: SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** `-w` poll period; default 500 ms. */
  intervalMs?: number;
}

const EVENT_TYPES = ["Normal", "Warning"];

export async function eventsCommand(options: EventsOptions, deps: EventsDeps = {}): Promise<number> {
  const { clock = realClock, stdout = stdoutSink(), stderr = (t) => process.stderr.write(t) } = deps;
  const filter = parseFilter(options);
  const output = parseOutput(options.output);
  using reader = openStoreReader(options.db);
  // The revision before the listing: what is written while it streams, -w prints again rather than misses.
  let revision = options.watch ? reader.store.revision() : 0;
  if (output) {
    await writeEventList(streamEvents(reader.store.db, filter), output, stdout);
    return 0;
  }
  let header = true;
  if ((await writeEventTable(streamEvents(reader.store.db, filter), clock.now(), () => eventCellBounds(reader.store.db), stdout)) > 0) {
    header = false;
  } else if (!options.watch) {
    stderr("No events found.\n");
  }
  if (!options.watch) return 0;
  const signal = deps.signal ?? interruptSignal();
  while (!signal.aborted) {
    try {
      await sleep(clock, deps.intervalMs ?? 500, signal);
    } catch {
      break;
    }
    const fresh = reader.store.events({ ...filter, afterRevision: revision });
    if (fresh.length === 0) continue;
    revision = Math.max(...fresh.map((e) => e.revision));
    await stdout(formatEventRows(fresh, clock.now(), header));
    header = false;
  }
  return 0;
}

function parseFilter(options: EventsOptions): EventFilter {
  const filter: EventFilter = {};
  // Like kubectl events: every namespace unless -n narrows it (-A says so explicitly).
  if (options.namespace !== undefined && !options.allNamespaces) filter.namespace = String(options.namespace);
  if (options.for !== undefined) {
    const [kind = "", name] = String(options.for).split("/", 2);
    if (!["pod", "pods", "po"].includes(kind.toLowerCase()) || !name) {
      throw new UsageError(`--for must be pod/NAME (got ${JSON.stringify(options.for)}); minikubelet records only pod events`);
    }
    filter.pod = name;
  }
  if (options.types !== undefined) {
    const types = String(options.types).split(",").map((t) => t.trim()).filter((t) => t !== "");
    for (const type of types) {
      const known = EVENT_TYPES.find((t) => t.toLowerCase() === type.toLowerCase());
      if (!known) throw new UsageError(`--types: unknown event type ${JSON.stringify(type)}; use ${EVENT_TYPES.join(", ")}`);
    }
    filter.types = types.map((type) => EVENT_TYPES.find((t) => t.toLowerCase() === type.toLowerCase())!);
  }
  return filter;
}

function parseOutput(value: unknown): "json" | "yaml" | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "json" || value === "yaml") return value;
  throw new UsageError(`unknown output format ${JSON.stringify(value)} for -o; use json or yaml`);
}

/** Aborts on the first SIGINT or SIGTERM, so `-w` ends cleanly with exit 0. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    controller.abort();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return controller.signal;
}
