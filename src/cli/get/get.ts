/**
 * `minikubelet get pods [NAME] [-f FILE] [-n NS | -A] [-o wide|json|yaml|name] [-w]`.
 * With `-f`, the pods come from a v1 Pod, PodList or List file (a `--status-file`, or real
 * `kubectl get pods -o json`) and every pod in the file is listed unless `-n` narrows it, as
 * `kubectl get -f` shows a file's objects whatever their namespace. Without `-f` the pods come from
 * the state database, where no `-n` means the `default` namespace, as in kubectl. `-w` (database
 * only) prints the list and then a row per pod change until Ctrl-C, like `kubectl get pods -w`.
 */
import { realClock, type Clock } from "../../clock.ts";
import { formatPods, POD_OUTPUTS, type PodOutput } from "../../printers/pod-table.ts";
import { refusedManifestNotes } from "../../v1/refused-pod.ts";
import { podList, withTypeMeta, type V1Pod } from "../../v1/v1.ts";
import { UsageError, UserError } from "../errors.ts";
import { writeStderr, writeStdout } from "../stdio.ts";
import { otherNamespacesNote, podNotFoundInDatabase } from "../pod-not-found.ts";
import { agentNotRunningNoteFor } from "../../store/agent-status.ts";

/** The flags as cac hands them over (long names, camelCased; numeric-looking values arrive as numbers). */
export interface GetCommandOptions {
  db?: string;
  filename?: string | number;
  namespace?: string | number;
  allNamespaces?: boolean;
  output?: string;
  watch?: boolean;
}

/** Which pods the caller asked for; the database reader receives it to filter in SQL. */
export interface PodQuery {
  db?: string;
  /** Undefined means every namespace (`-A`). */
  namespace: string | undefined;
  name: string | undefined;
}

export interface GetCommandDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Ends `-w` (default: SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** `-w` poll period; default 500 ms. */
  intervalMs?: number;
}

const POD_RESOURCES = new Set(["pods", "pod", "po"]);

/** Runs `get`; returns the exit code. Bad flags throw UsageError (2), missing pods UserError (1). */
export async function getCommand(
  resource: string,
  name: string | undefined,
  options: GetCommandOptions,
  deps: GetCommandDeps = {},
): Promise<number> {
  const { clock = realClock, stdout = writeStdout, stderr = writeStderr } = deps;
  const target = parseTarget(resource, name);
  const output = parseOutput(options.output);
  const allNamespaces = options.allNamespaces === true;
  if (options.watch && options.filename) throw new UsageError("--watch cannot be used with -f; a file does not change under us");

  const filename = stringOption(options.filename);
  const namespaceGiven = stringOption(options.namespace) !== undefined;
  const namespace = allNamespaces ? undefined : (stringOption(options.namespace) ?? (filename ? undefined : "default"));
  const query: PodQuery = { db: options.db, namespace, name: target.name };
  const source = filename ?? "the state database";
  if (options.watch) return watchCommand(query, { output, allNamespaces }, { clock, stdout, stderr, signal: deps.signal, intervalMs: deps.intervalMs });
  // The yaml library (-f, -o yaml) and the watch are loaded by the runs that use them: the library
  // alone takes as long to load as the rest of a plain `get pods`.
  const loaded = filename ? (await import("../../v1/pod-list.ts")).readPodsFile(filename) : await listPodsFromDatabase(query);
  if (!filename && target.name !== undefined && loaded.length === 0) throw podNotFoundInDatabase(options.db, target.name);
  const now = clock.now();
  if (!filename) noteAgentNotRunning(query, now, stderr);
  const pods = selectPods(loaded, query, source);
  const table = output === undefined || output === "wide";
  // A plain `get pods` looks only in default: say when other namespaces hold pods (kubectl leaves that unsaid).
  const elsewhere = table && !filename && namespace !== undefined && !namespaceGiven && target.name === undefined ? otherNamespacesNote(options.db, namespace) : undefined;

  if (output === "json" || output === "yaml") {
    const { serializeObject } = await import("../../printers/serialize.ts");
    // kubectl prints the object itself, not a List, when one pod is asked for by name.
    stdout(serializeObject(target.name !== undefined ? withTypeMeta(pods[0]!) : podList(pods), output));
    return 0;
  }
  const text = formatPods(pods, { output, allNamespaces, now });
  if (text === "" && table) {
    stderr(namespace === undefined ? "No resources found\n" : `No resources found in ${namespace} namespace.\n`);
  } else {
    stdout(text);
    if (table) stderr(refusedManifestNotes(pods));
  }
  if (elsewhere) stderr(`${elsewhere}\n`);
  return 0;
}

/** `-w`: the list, then a row per change until the signal (Ctrl-C) ends it with exit 0. */
async function watchCommand(
  query: PodQuery,
  format: { output: PodOutput; allNamespaces: boolean },
  deps: { clock: Clock; stdout: (text: string) => void; stderr: (text: string) => void; signal?: AbortSignal; intervalMs?: number },
): Promise<number> {
  const [{ podsRevision, watchPods }, { PodWatchPrinter }, { interruptSignal }] = await Promise.all([
    import("../../store/pods-view.ts"),
    import("./get-watch.ts"),
    import("../events/events.ts"),
  ]);
  // The revision first: a change written while the list is read is printed again, never lost.
  const sinceRevision = podsRevision(query.db);
  noteAgentNotRunning(query, deps.clock.now(), deps.stderr);
  const pods = selectPods(await listPodsFromDatabase(query), query, "the state database");
  const printer = new PodWatchPrinter(format);
  deps.stdout(printer.list(pods, deps.clock.now()));
  await watchPods({
    ...query,
    clock: deps.clock,
    signal: deps.signal ?? interruptSignal(),
    intervalMs: deps.intervalMs,
    sinceRevision,
    onPod: (pod) => deps.stdout(printer.row(pod, deps.clock.now())),
  });
  return 0;
}

/** One stderr line while no agent holds the database: its rows are a stopped agent's last checkpoint. */
function noteAgentNotRunning(query: PodQuery, now: number, stderr: (text: string) => void): void {
  const note = agentNotRunningNoteFor(query.db, now);
  if (note) stderr(`${note}\n`);
}

/**
 * Reads pods from the state database through the store's pods view, in the API server's order
 * (namespace, then name); the caller still filters by namespace and name.
 */
export async function listPodsFromDatabase(query: PodQuery): Promise<V1Pod[]> {
  const { listPodsFromStore } = await import("../../store/pods-view.ts");
  return listPodsFromStore(query);
}

/** Pods matching the query's namespace and name; a missing or ambiguous NAME is an error. */
export function selectPods(pods: V1Pod[], query: PodQuery, source: string): V1Pod[] {
  const inNamespace = pods.filter((pod) => query.namespace === undefined || (pod.metadata.namespace || "default") === query.namespace);
  if (query.name === undefined) return inNamespace;
  const named = inNamespace.filter((pod) => pod.metadata.name === query.name);
  const where = query.namespace === undefined ? source : `namespace "${query.namespace}" of ${source}`;
  if (named.length === 0) throw new UserError(`pods "${query.name}" not found in ${where}`);
  const namespaceOf = (pod: V1Pod) => pod.metadata.namespace || "default";
  // One namespace can list a name twice: a pod still stopping and its file's Invalid row.
  if (new Set(named.map(namespaceOf)).size > 1) {
    const namespaces = [...new Set(named.map(namespaceOf))].join(", ");
    throw new UserError(`pods "${query.name}" is in several namespaces of ${source} (${namespaces}); choose one with -n`);
  }
  return named;
}

/** Accepts `pods`, `pod`, `po`, and kubectl's `pod/NAME` form. */
function parseTarget(resource: string, name: string | undefined): { name: string | undefined } {
  const [type = "", inlineName] = resource.split("/", 2);
  if (!POD_RESOURCES.has(type.toLowerCase())) {
    throw new UsageError(`unknown resource type "${type}"; minikubelet serves only pods (pods, pod, po)`);
  }
  if (inlineName !== undefined) {
    if (name !== undefined) throw new UsageError(`give the pod either as ${resource} or as a separate NAME, not both`);
    if (inlineName === "") throw new UsageError(`"${resource}" names no pod`);
    return { name: inlineName };
  }
  return { name };
}

/** cac turns `-n 123` into a number; an empty value counts as not given. */
function stringOption(value: string | number | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : String(value);
}

function parseOutput(value: unknown): PodOutput {
  if (value === undefined || value === "") return undefined;
  if ((POD_OUTPUTS as readonly unknown[]).includes(value)) return value as PodOutput;
  throw new UsageError(`unknown output format ${JSON.stringify(value)} for -o; use one of ${POD_OUTPUTS.join(", ")}`);
}
