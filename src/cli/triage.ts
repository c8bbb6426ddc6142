/**
 * `minikubelet triage POD [-c CONTAINER] [-o text|json|markdown]`: the CrashLoopBackOff runbook
 * run against the database. Finds the pod and the container (the one in trouble unless -c names
 * one), gathers the facts (src/tools/triage/gather.ts), analyzes them (pure) and prints the report.
 */
import { realClock, type Clock } from "../clock.ts";
import { AmbiguousPodError } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { agentNotRunningNote } from "../store/agent-status.ts";
import { analyze } from "../tools/triage/analyze.ts";
import { containerFacts, gatherFacts, type EngineLogReader } from "../tools/triage/gather.ts";
import { shellWord } from "../tools/triage/next-steps.ts";
import { pickContainer } from "../tools/triage/pick-container.ts";
import { renderReport, type TriageFormat } from "../tools/triage/render.ts";
import { UsageError, UserError } from "./errors.ts";
import { backoffOptions } from "./options.ts";
import type { BackoffSource } from "../tools/triage/backoff-outlook.ts";
import { podNotFound } from "./pod-not-found.ts";

export interface TriageOptions {
  db?: string;
  namespace?: unknown;
  container?: unknown;
  output?: unknown;
  backoffBase?: unknown;
  backoffMax?: unknown;
}

export interface TriageDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** For attempts without a log file (docker): their output from the engine. */
  readEngineLogs?: EngineLogReader;
}

const FORMATS: readonly TriageFormat[] = ["text", "json", "markdown"];

export async function triageCommand(podName: string, options: TriageOptions, deps: TriageDeps = {}): Promise<number> {
  const { clock = realClock, stdout = (t) => process.stdout.write(t), stderr = (t) => process.stderr.write(t) } = deps;
  const format = (options.output === undefined ? "text" : String(options.output)) as TriageFormat;
  if (!FORMATS.includes(format)) throw new UsageError(`-o must be one of ${FORMATS.join(", ")} (got ${JSON.stringify(options.output)})`);
  const fromFlags = options.backoffBase !== undefined || options.backoffMax !== undefined;
  const flagSettings = backoffOptions(options);
  using reader = openStoreReader(options.db);
  const recorded = fromFlags ? undefined : reader.store.recordedBackoffSettings();
  const backoffSettings = recorded ?? flagSettings;
  const backoffSource: BackoffSource = fromFlags ? "flags" : recorded ? "agent" : "default";
  let pod;
  try {
    pod = reader.store.findPod(String(podName), options.namespace === undefined ? undefined : String(options.namespace));
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
  if (!pod) {
    // A manifest the agent refused never ran: there is nothing to triage, and describe lists its problems.
    const [refused] = reader.store.refusedPods({ namespace: options.namespace === undefined ? undefined : String(options.namespace), name: String(podName) });
    if (refused) throw new UserError(`pod ${refused.name} never ran: its manifest ${refused.file} is refused (${refused.reason}); minikubelet describe pod ${refused.name} -n ${refused.namespace} lists its problems`);
    throw podNotFound(reader.store, reader.path, String(podName), { includeDeleted: true });
  }
  const record = reader.store.podRecord(pod.uid);
  if (!record) throw new UserError(`pods "${pod.name}" has no record in ${reader.path}`);
  // The back-off times below assume an agent applies them.
  const note = agentNotRunningNote(reader.path, reader.store, clock.now());
  if (note) stderr(`${note}\n`);
  const containers = containerFacts(reader.store, pod, record);
  const names = containers.map((c) => c.name);
  let container = options.container === undefined ? undefined : String(options.container);
  if (container === undefined) {
    const pick = pickContainer(containers, record.initialized);
    container = pick.name;
    if (names.length > 1) {
      const trouble = pick.inTrouble.length > 0 ? ` (in trouble: ${pick.inTrouble.join(", ")})` : " (none in trouble)";
      stderr(`Defaulted container "${container}" out of: ${names.join(", ")}${trouble}\n`);
    }
  } else if (!names.includes(container)) {
    throw new UserError(`container ${container} is not valid for pod ${pod.name} (containers: ${names.join(", ")})`);
  }
  const facts = await gatherFacts(reader.store, pod, record, containers, container, {
    backoffSettings,
    backoffSource,
    commandFlags: options.db === undefined ? "" : ` --db ${shellWord(String(options.db))}`,
    clock,
    readEngineLogs: deps.readEngineLogs,
  });
  stdout(renderReport(analyze(facts), format));
  return 0;
}
