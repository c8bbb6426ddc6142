/**
 * `minikubelet run`: assembles the agent (source watcher, runtime, prober, store, loop), prints one
 * line per event, and on SIGINT/SIGTERM leaves the pods running for the next agent to adopt, as a
 * kubelet restart does (or stops them first with --stop-pods-on-exit), then prints the final table.
 */
import { nodeNameOf } from "../node-name.ts";
import { nodeAllocatable, readHostCapacity } from "../node-allocatable.ts";
import type { DiskPressureMonitor } from "../eviction/disk-pressure.ts";
import { startNodeMonitor } from "./run-node.ts";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { realClock, type Clock } from "../clock.ts";
import type { KubeEvent } from "../kubelet/events.ts";
import { Kubelet } from "../kubelet/kubelet.ts";
import { ManifestWatcher, type ManifestWatcherOptions } from "../kubelet/manifest-watcher.ts";
import { fieldWarningEvents, refusedManifestEvent } from "../kubelet/refused-manifests.ts";
import { isRuntimeName } from "../manifest/runtime-rules.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { refusedPodObject } from "../status/refused-pod.ts";
import type { V1Pod } from "../status/v1.ts";
import { formatPods } from "../status/pod-table.ts";
import { writeStatusFile } from "../status/status-file.ts";
import { UsageError, UserError } from "./errors.ts";
import { backoffOptions, logPolicyOption, maxPodsOption, nodeOption, nodeReservationsOption, podMaxPidsOption, retentionOptions, secondsOption } from "./options.ts";
import type { ContainerLogPolicy } from "../runtime/log-rotation-policy.ts";
import { startBanner } from "./run-banner.ts";
import { resolveDbPath, runtimeRootOf } from "../store/db-path.ts";
import { DEFAULT_RETENTION } from "../store/retention.ts";
import { databaseIdentity } from "../store/identity.ts";
import { recordBackoffSettings } from "../store/agent-settings.ts";
import { openAgentDatabase } from "../store/open.ts";
import { SqliteStore } from "../store/pod-store.ts";
import { ProbeManager } from "../prober/probe-manager.ts";
import { Prober } from "../prober/prober.ts";
import { AdoptionGate, adoptFromRuntime } from "../kubelet/adoption-gate.ts";
import { DesiredChanges, FULL_SYNC_MS } from "../kubelet/desired-changes.ts";
import { CommitBroadcast } from "../api/commit-feed.ts";
import { apiFailedEvent, apiListenOption, startAgentApi } from "./api-listen.ts";
import { PodSources } from "./run-sources.ts";

export interface RunOptions {
  db?: string;
  manifests?: string;
  /** cac turns a numeric-looking value into a number, hence unknown. */
  node?: unknown;
  runtime?: string;
  statusFile?: string;
  backoffBase?: unknown;
  backoffMax?: unknown;
  stopPodsOnExit?: boolean;
  pauseImage?: string;
  resync?: unknown;
  strict?: boolean;
  apiListen?: string;
  containerLogMaxSize?: unknown;
  containerLogMaxFiles?: unknown;
  podMaxPids?: unknown;
  eventTtl?: unknown;
  maxEventsPerPod?: unknown;
  evictionHard?: unknown;
  systemReserved?: unknown;
  kubeReserved?: unknown;
  maxPods?: unknown;
}

/** How often an agent whose passes write nothing looks for expired history (retention's own interval). */
const EXPIRY_CHECK_MS = DEFAULT_RETENTION.intervalMs;

/** Status-file writes are coalesced: a burst of pod syncs costs one write. */
const STATUS_WRITE_DELAY_MS = 200;

export async function runCommand(options: RunOptions): Promise<number> {
  if (!options.manifests) throw new UsageError("run needs --manifests DIR");
  const dir = resolve(options.manifests);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`--manifests: ${dir} is not a directory`);
  // Every flag is checked before anything starts: a bad one must not leave a database or a runtime root behind.
  const backoff = backoffOptions(options);
  const resyncMs = secondsOption("--resync", options.resync ?? 20) * 1000;
  const node = nodeOption(options.node);
  const apiListen = apiListenOption(options.apiListen);
  const logPolicy = logPolicyOption(options);
  const podMaxPids = podMaxPidsOption(options.podMaxPids);
  const retention = retentionOptions(options);
  const reservations = nodeReservationsOption(options);
  const maxPods = maxPodsOption(options.maxPods);
  const dbPath = resolveDbPath(options.db);
  const clock = realClock;
  const started = clock.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const err = (line: string) => process.stderr.write(`${line}\n`);
  const log = (message: string) => err(`minikubelet: ${message}`);

  // Listening first: a SIGTERM during start-up must end the agent the same orderly way, not kill it mid-write.
  const signalled = waitForSignal();
  // The locks next (the database's, which covers its runtime root, then docker's node): a second
  // agent on what this one owns must not touch the runtime at all.
  const database = openAgentDatabase(dbPath);
  const identity = databaseIdentity(database.db);
  recordBackoffSettings(database.db, backoff, clock.now());
  const { runtime, logPathOf, unlock, root, limitsProblem } = await createRuntime(options, { root: runtimeRootOf(dbPath), owner: identity, node, dbPath, logPolicy, podMaxPids }, log).catch((error) => {
    database.close();
    throw error;
  });
  const commits = new CommitBroadcast();
  let disk: DiskPressureMonitor | undefined;
  const onCommit = (revision: number) => {
    commits.publish(revision);
    // A commit is a write to the database's filesystem: a cheap moment to look at the free space,
    // once the write that committed (a pod's checkpoint, mid-sync) has returned.
    queueMicrotask(() => disk?.noteWrite());
  };
  const store = new SqliteStore({ db: database.db, clock, logPathOf, retention, log, onCommit });
  const nodeName = nodeNameOf(node);
  const sources = new PodSources({ db: database.db, store, node, rules: { runtime: isRuntimeName(runtime.name) ? runtime.name : undefined }, log });
  const api = startAgentApi({ dbPath, listen: apiListen, nodeName, commits, runtime, podWrites: sources.writes, clock, log, maxPods });
  const apiUrl = api && "url" in api ? api.url : undefined;
  for (const line of startBanner({ pid: process.pid, database: dbPath, runtime: runtime.name, runtimeRoot: root, node, api: apiUrl })) log(line);
  if (limitsProblem) log(`cgroups: ${limitsProblem}; containers run without their resource limits`);
  // The node's own events (no pod's): printed like the loop's and saved at once.
  const nodeEvents = (events: KubeEvent[]) => {
    for (const event of events) out(eventLine(event, started));
    try {
      store.saveEvents(events);
    } catch (error) {
      log(`recording ${events.map((event) => event.reason).join(", ")} failed: ${(error as Error).message}`);
    }
  };
  if (api && "failure" in api) {
    log(`api: ${api.failure}; the agent runs its pods without its API`);
    nodeEvents([apiFailedEvent(nodeName, api.failure, clock.now())]);
  }
  const probes = new ProbeManager({ runner: new Prober({ clock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }), clock });
  // Files the source refuses now: a pod whose file turned bad is stopped, and its PodRemoved says why.
  const refusedFiles = new Set<string>();
  const removalReason = (source: string) => (refusedFiles.has(source) ? "turned invalid" : undefined);
  const allocatable = nodeAllocatable(readHostCapacity(runtimeRootOf(dbPath)), reservations, maxPods);
  const nodeConditions = { diskPressure: () => disk?.pressure ?? false };
  const kubelet = new Kubelet({ runtime, clock, backoff, store, probes, log, removalReason, allocatable, node: nodeConditions });
  kubelet.recorder.subscribe((event) => out(eventLine(event, started)));
  disk = startNodeMonitor({ db: database.db, dbPath, nodeName, reservations, clock, log, emit: nodeEvents, changed: () => kubelet.nodeConditionsChanged() });

  const objects = () => kubelet.servedPods();
  if (options.statusFile) {
    const file = resolve(options.statusFile);
    let cancel: (() => void) | undefined;
    kubelet.onPodSynced(() => {
      cancel ??= clock.setTimeout(() => {
        cancel = undefined;
        try {
          writeStatusFile(file, objects());
        } catch (error) {
          err(`minikubelet: writing ${file}: ${(error as Error).message}`);
        }
      }, STATUS_WRITE_DELAY_MS);
    });
  }

  // A rescan that found nothing new is no full pass: pods wake on their events and timers. A runtime
  // that backs its own exit reports up needs no periodic pass, so a thousand quiet pods cost none.
  const changes = new DesiredChanges(clock, runtime.reportsEveryExit ? Number.POSITIVE_INFINITY : FULL_SYNC_MS);
  // Nothing is created or stopped before the directory has been read once ("sources ready") and
  // the checkpoint and the runtime have been matched: adoption, not restart, retried until it works.
  const gate = new AdoptionGate({
    adopt: (desired) => adoptFromRuntime({ kubelet, runtime, store, clock, node, database: identity }, desired),
    sync: (desired) => {
      if (changes.worthSyncing(desired)) void kubelet.sync(desired);
      sources.removeFinished();
    },
    clock,
    log,
  });
  const watcher = new ManifestWatcher({
    dir,
    node,
    clock,
    resyncMs,
    // Both sources in one desired set; a file never defines a key the API holds (`taken`).
    onPods: (pods) => gate.offer(sources.desired(pods)),
    taken: () => sources.api.taken(),
    ...refusedManifestReporting(store, runtime, options, clock, refusedFiles, (events) => events.forEach((event) => out(eventLine(event, started))), log),
    onReadFailure: (message) => err(`error: ${message}`),
  });
  kubelet.start();
  watcher.start();
  sources.attach(kubelet, () => watcher.scan());
  // Expiry follows the writes; a quiet agent (no pass writes anything) still ages its history out.
  const expiry = setInterval(() => store.expireIfDue(), EXPIRY_CHECK_MS);

  await signalled;
  clearInterval(expiry);
  disk.stop();
  if (api && "stop" in api) await api.stop();
  watcher.stop();
  await gate.stop();
  // A kubelet restart never stops workloads: the next agent adopts them, as after kill -9.
  if (options.stopPodsOnExit === true) {
    err("minikubelet: stopping pods (press Ctrl-C again to exit at once)");
    const final = new Map<string, V1Pod>();
    for (const pod of kubelet.servedPods()) final.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
    kubelet.onPodSynced((pod, object) => final.set(pod.spec.key, object));
    await kubelet.shutdown();
    kubelet.stop();
    out("");
    // How each pod ended, not "Terminating": the deletion is what the user asked for.
    const ended = [...final.values()].map(({ metadata: { deletionTimestamp: _asked, deletionGracePeriodSeconds: _grace, ...metadata }, ...pod }) => ({ ...pod, metadata }));
    out(formatPods(ended, { now: clock.now() }).trimEnd());
  } else {
    await kubelet.idle();
    kubelet.stop();
    out("");
    out(formatPods(objects(), { now: clock.now() }).trimEnd());
    err("minikubelet: pods left running for the next agent to adopt; --stop-pods-on-exit stops them");
  }
  await unlock?.();
  await runtime.close();
  database.close();
  return 0;
}

/**
 * A refused file becomes a Warning event and a row `get pods` shows as Invalid until the file is
 * fixed or removed; fields a pod runs without become one Warning each, once per pod.
 */
function refusedManifestReporting(
  store: SqliteStore,
  runtime: Runtime,
  options: RunOptions,
  clock: Clock,
  refusedFiles: Set<string>,
  print: (events: KubeEvent[]) => void,
  log: (message: string) => void,
): Pick<ManifestWatcherOptions, "rules" | "checkpointed" | "onRefused" | "onWarnings"> {
  const save = (what: string, write: () => void) => {
    try {
      write();
    } catch (error) {
      log(`recording ${what} failed: ${(error as Error).message}`);
    }
  };
  return {
    rules: { runtime: isRuntimeName(runtime.name) ? runtime.name : undefined, strict: options.strict === true },
    checkpointed: new Map(store.loadState().pods.filter((pod) => !pod.spec.api).map((pod) => [pod.spec.source, pod.spec.key])),
    onRefused: (refused, fresh) => {
      refusedFiles.clear();
      for (const entry of refused) refusedFiles.add(entry.file);
      const events = fresh.map((entry) => refusedManifestEvent(entry, clock.now()));
      print(events);
      save("refused manifests", () => store.saveRefusedManifests(refused, events, refusedPodObject));
    },
    onWarnings: (pod, warnings) => {
      const events = fieldWarningEvents(pod, warnings, clock.now());
      print(events);
      save(`warnings of pod ${pod.key}`, () => store.saveEvents(events));
    },
  };
}

/** `4.1s Warning BackOff demo/crash-lab crash: Back-off restarting ...` */
export function eventLine(event: KubeEvent, started: number): string {
  const seconds = ((event.at - started) / 1000).toFixed(1);
  const subject = event.container ? `${event.namespace}/${event.pod} ${event.container}` : `${event.namespace}/${event.pod}`;
  return `${seconds}s ${event.type} ${event.reason} ${subject}: ${event.message}`;
}

interface RuntimeChoice {
  runtime: Runtime;
  /** The directory the runtime keeps this agent's files in. */
  root: string;
  /** Where an attempt's output file is, for `logs` (the process runtime keeps one per attempt). */
  logPathOf?: (podUid: string, containerId: string) => string | undefined;
  /** Releases what the agent holds in the runtime beyond its database's lock (docker: the node). */
  unlock?: () => Promise<void>;
  /** Why resource limits cannot be enforced, said once at start-up (the process runtime without cgroups). */
  limitsProblem?: string;
}

interface AgentOwnership {
  /** The agent's own runtime root (runtimeRootOf its database). */
  root: string;
  /** Its database's identity, put on everything the runtime creates. */
  owner: string;
  node: string;
  dbPath: string;
  logPolicy: ContainerLogPolicy;
  /** `--pod-max-pids`; undefined is no limit. */
  podMaxPids: number | undefined;
}

/** `log` hears what the runtime leaves alone and why (the process runtime's unreadable records). */
async function createRuntime(options: RunOptions, agent: AgentOwnership, log: (message: string) => void): Promise<RuntimeChoice> {
  const { root, owner, logPolicy } = agent;
  const name = options.runtime ?? "process";
  switch (name) {
    case "process": {
      const { ProcessRuntime } = await import("../runtime/process.ts");
      const { ProcessLayout } = await import("../runtime/process-files.ts");
      const rootDir = join(root, "process");
      mkdirSync(rootDir, { recursive: true });
      const layout = new ProcessLayout(rootDir);
      const runtime = new ProcessRuntime({ rootDir, owner, logPolicy, podPidsLimit: agent.podMaxPids, log });
      return { runtime, root: rootDir, logPathOf: (uid, id) => join(layout.containerDir(uid, id), "log"), limitsProblem: runtime.cgroupProblem };
    }
    case "docker": {
      const { DockerRuntime } = await import("../runtime/docker.ts");
      const volumeRoot = join(root, "volumes");
      const runtime = new DockerRuntime({ pauseImage: options.pauseImage, volumeRoot, owner, logPolicy, nodeResources: { podMaxPids: agent.podMaxPids } });
      // The node's label namespace on the engine is the agent's too: one agent per node, whatever its database.
      const lock = await runtime.lockNode(agent.node, agent.dbPath).catch(async (error) => {
        await runtime.close();
        throw error;
      });
      return { runtime, root: volumeRoot, unlock: () => lock.release() };
    }
    default:
      throw new UsageError(`--runtime must be process or docker (got ${JSON.stringify(name)})`);
  }
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      // A second signal while pods are stopping means "now".
      const force = () => process.exit(130);
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      resolve();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
