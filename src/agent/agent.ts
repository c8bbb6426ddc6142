/**
 * A running agent, assembled from options (the CLI only parses flags): the database and its lock,
 * the runtime and its PLEG, the store, the two pod sources (the manifest directory and the API's
 * pods), the prober, the loop, the node monitor and the API, wired as DESIGN.md draws the data
 * flow. `stop` leaves the pods running for the next agent, as a kubelet restart does; `shutdown`
 * stops them first. Either releases everything the agent holds, in the reverse order it took it.
 */
import { resolve } from "node:path";
import { CommitBroadcast } from "../api/watch/commit-feed.ts";
import type { ListenAddress } from "../api/http/server.ts";
import type { Clock } from "../clock.ts";
import { DesiredChanges } from "../config/desired-changes.ts";
import { ManifestWatcher } from "../config/manifest-watcher.ts";
import { StoreObjectSource } from "../config/store-object-source.ts";
import { issueBoundToken } from "../api/resources/objects/token-request-api.ts";
import type { IssuedToken, TokenRequestInput } from "../kubelet/objects/pod-object-source.ts";
import { ensureNamespaceDefaults } from "../api/resources/objects/namespace-defaults.ts";
import { SYSTEM_NAMESPACES } from "../api/resources/namespaces/namespace-objects.ts";
import { liveNamespaceRows } from "../store/namespace-reads.ts";
import { PodSources } from "../config/pod-sources.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import { AdoptionGate, adoptFromRuntime } from "../kubelet/adoption/adoption-gate.ts";
import type { BackoffSettings } from "../kubelet/backoff.ts";
import { Kubelet } from "../kubelet/kubelet.ts";
import { isRuntimeName } from "../manifest/runtime-rules.ts";
import { nodeAllocatable, readHostCapacity, type NodeReservations } from "../eviction/node-allocatable.ts";
import { lowestOomScoreAdj } from "../host/oom-score-floor.ts";
import { nodeNameOf } from "../host/node-name.ts";
import { EventedPleg } from "../pleg/evented-pleg.ts";
import { ProbeManager } from "../prober/probe-manager.ts";
import { StatsCollector } from "../stats/collector.ts";
import { Prober } from "../prober/prober.ts";
import type { ContainerLogPolicy } from "../runtime/log-rotation-policy.ts";
import { writeStatusFile } from "./status-file.ts";
import type { V1Pod } from "../v1/v1.ts";
import { recordBackoffSettings } from "../store/agent-settings.ts";
import { runtimeRootOf } from "../store/db-path.ts";
import { databaseIdentity } from "../store/identity.ts";
import { openAgentDatabase } from "../store/open.ts";
import { SqliteStore } from "../store/pod-store.ts";
import { DEFAULT_RETENTION, type RetentionSettings } from "../store/retention.ts";
import { KubeletMetrics } from "../server/metrics.ts";
import { SYNC_LOOP_MIN_THRESHOLD_MS } from "../server/routes.ts";
import { kubeletConfigz } from "../server/configz.ts";
import { MAX_PODS } from "../eviction/node-allocatable.ts";
import { DEFAULT_LIMITS, type ApiLimits } from "../api/http/context.ts";
import { connectionsWithin, raiseOpenFilesLimit } from "../host/open-files.ts";
import { apiFailedEvent, startAgentApi } from "./api.ts";
import type { RunningApi } from "../api/start.ts";
import type { Database } from "bun:sqlite";
import { nodeKubeletServing, startAgentKubeletServer, type NodeServingOptions } from "./kubelet-server.ts";
import { startBanner } from "./banner.ts";
import { startNodeMonitor, type NodeMonitor } from "./node-monitor.ts";
import { startNodeMode } from "./node-mode.ts";
import { ClusterClient } from "../node/cluster-client.ts";
import { PodObjectCache } from "../node/pod-object-cache.ts";
import { readHostFacts } from "../node/node-object.ts";
import type { ClusterCredentials } from "../node/kubeconfig.ts";
import type { PodSpec } from "../manifest/types.ts";
import { refusedManifestReporting } from "./refused-reporting.ts";
import { DEFAULT_RESYNC_SECONDS } from "./defaults.ts";
import { createRuntime, type RuntimeKind } from "./runtime-choice.ts";

/** How often an agent whose passes write nothing looks for expired history (retention's own interval). */
const EXPIRY_CHECK_MS = DEFAULT_RETENTION.intervalMs;

/** Status-file writes are coalesced: a burst of pod syncs costs one write. */
const STATUS_WRITE_DELAY_MS = 200;

export interface AgentOptions {
  dbPath: string;
  /** The manifest directory (static pods), absolute or relative to the working directory; node mode may run without one. */
  manifests: string | undefined;
  /** Node mode: the cluster to join, with the node's credentials (`run --kubeconfig`), how its kubelet port is served, and the InternalIP it reports. */
  cluster?: { credentials: ClusterCredentials; serving?: NodeServingOptions; nodeIP?: string };
  /** `--node` ("" for none). */
  node: string;
  runtime: RuntimeKind;
  backoff: BackoffSettings;
  /** Default DEFAULT_RESYNC_SECONDS. */
  resyncMs?: number;
  /** Where the API listens; undefined serves none. */
  api: ListenAddress | undefined;
  /** The API's bounds (`run`'s flags); default DEFAULT_LIMITS. Its connections are further bounded by the open-files limit. */
  apiLimits?: ApiLimits;
  /** Where the kubelet's own endpoints listen (`--kubelet-listen`); undefined serves none. */
  kubeletListen?: ListenAddress | undefined;
  logPolicy: ContainerLogPolicy;
  podMaxPids: number | undefined;
  retention: Partial<RetentionSettings>;
  reservations: NodeReservations;
  maxPods: number | undefined;
  /** Refuse manifests with unknown fields (`--strict`). */
  strict: boolean;
  pauseImage?: string;
  /** Writes the pods as a v1 List after each pass. */
  statusFile?: string;
  /** Between two readings of the node's and containers' usage (`--housekeeping-interval`); default 10 s. */
  housekeepingIntervalMs?: number;
  clock: Clock;
  /** Each event of a pod, a source or the node, as it happens. */
  onEvent: (event: KubeEvent) => void;
  /** What the agent says about itself (its banner, what it could not do): one line each. */
  log: (message: string) => void;
  /** A line for stderr as it is (a manifest directory that cannot be read: `error: ...`). */
  stderr: (line: string) => void;
}

export interface RunningAgent {
  /** Leaves the pods running for the next agent to adopt; resolves with them as last synced, once all is released. */
  stop(): Promise<V1Pod[]>;
  /** Stops every pod (preStop, SIGTERM, the grace, SIGKILL), then releases all; resolves with how each pod ended. */
  shutdown(): Promise<V1Pod[]>;
  /**
   * Gives up the runtime's node lock only, for an exit at once in the middle of either: the next
   * agent on this node finds the lock free, and finds the pods and the database as after a kill -9.
   */
  unlock(): Promise<void>;
}

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const { dbPath, node, clock, log, onEvent } = options;
  const dir = options.manifests === undefined ? undefined : resolve(options.manifests);
  // Before anything opens a descriptor: the limit the whole agent lives within.
  const connections = connectionBudget(options.apiLimits ?? DEFAULT_LIMITS, log);
  // The locks first (the database's, which covers its runtime root, then docker's node): a second
  // agent on what this one owns must not touch the runtime at all.
  const database = openAgentDatabase(dbPath);
  const identity = databaseIdentity(database.db);
  recordBackoffSettings(database.db, options.backoff, clock.now());
  const chosen = await createRuntime({
    kind: options.runtime,
    root: runtimeRootOf(dbPath),
    owner: identity,
    node,
    dbPath,
    logPolicy: options.logPolicy,
    podMaxPids: options.podMaxPids,
    pauseImage: options.pauseImage,
    log,
  }).catch((error) => {
    database.close();
    throw error;
  });
  const { runtime } = chosen;
  const commits = new CommitBroadcast();
  let disk: NodeMonitor | undefined;
  const onCommit = (revision: number) => {
    commits.publish(revision);
    // A commit is a write to the database's filesystem: a cheap moment to look at the free space,
    // once the write that committed (a pod's checkpoint, mid-sync) has returned.
    queueMicrotask(() => disk?.noteWrite());
  };
  const store = new SqliteStore({ db: database.db, clock, logPathOf: chosen.logPathOf, retention: options.retention, log, onCommit });
  const nodeName = nodeNameOf(node);
  const rules = { runtime: isRuntimeName(runtime.name) ? runtime.name : undefined };
  const sources = new PodSources({ db: database.db, store, node, rules, log });
  // The loop is built below; the server's figures and handlers, and the stats' pods, reach it through `loop` once it is.
  const loop: { kubelet?: Kubelet } = {};
  const metrics = new KubeletMetrics({ pods: () => loop.kubelet?.pods.values() ?? [] });
  const pleg = new EventedPleg({ runtime, clock, log, metrics: metrics.recorder });
  const stats = new StatsCollector({ nodeName, runtime, pods: () => loop.kubelet?.servedPods() ?? [], clock, intervalMs: options.housekeepingIntervalMs, node: { fsPath: runtimeRootOf(dbPath) }, log });
  const resyncMs = options.resyncMs ?? DEFAULT_RESYNC_SECONDS * 1000;
  // Node mode's one client of the cluster: its parts and the kubelet port's reviews share it.
  const cluster = options.cluster && { ...options.cluster, client: new ClusterClient(options.cluster.credentials) };
  if (cluster) metrics.countClusterRequests(cluster.client.requestCounts);
  const serving = cluster && nodeKubeletServing({ clientCa: cluster.credentials.ca, ...cluster.serving, client: cluster.client, nodeName, clock, log });
  const kubeletServer = startAgentKubeletServer({
    ...(serving && { serving }),
    dbPath,
    listen: options.kubeletListen,
    nodeName,
    commits,
    runtime,
    clock,
    log,
    maxConnections: connections.kubelet,
    metrics,
    stats,
    servedPods: () => loop.kubelet?.servedPods() ?? [],
    syncLoop: { lastIteration: () => loop.kubelet?.lastSyncLoopIteration() ?? clock.now(), thresholdMs: Math.max(2 * resyncMs, SYNC_LOOP_MIN_THRESHOLD_MS) },
    configz: kubeletConfigz({
      staticPodPath: dir ?? "",
      fileCheckFrequencyMs: resyncMs,
      maxContainerRestartPeriodMs: options.backoff.capMs,
      logPolicy: options.logPolicy,
      podPidsLimit: options.podMaxPids,
      reservations: options.reservations,
      maxPods: options.maxPods ?? MAX_PODS,
      listen: options.kubeletListen ?? { hostname: "", port: 0 },
    }),
  });
  const kubeletEndpoint = kubeletServer && "url" in kubeletServer ? kubeletServer : undefined;
  const api = startAgentApi({ dbPath, listen: options.api, nodeName, commits, runtime, podWrites: sources.writes, clock, log, limits: connections.api, maxPods: options.maxPods, plegHealth: () => pleg.healthy(), metrics: stats, kubelet: () => kubeletEndpoint, diskPressure: () => disk?.condition() });
  const apiUrl = api && "url" in api ? api.url : undefined;
  // The controllers' part at start (default ServiceAccounts, kube-root-ca.crt); a database that takes no write (a full disk) delays it to the namespace's next create.
  try {
    const rootCa = api && "url" in api ? api.caPem : undefined;
    for (const namespace of [...SYSTEM_NAMESPACES, ...liveNamespaceRows(database.db).map((row) => row.name)]) ensureNamespaceDefaults(sources.writes.objects, namespace, clock.now(), rootCa);
  } catch (error) {
    log(`creating the namespaces' default ServiceAccounts and kube-root-ca.crt failed: ${(error as Error).message}`);
  }
  for (const line of startBanner({ pid: process.pid, database: dbPath, runtime: runtime.name, runtimeRoot: chosen.root, runtimeState: chosen.stateRoot, node, api: apiUrl, kubelet: kubeletEndpoint?.url })) log(line);
  if (chosen.limitsProblem) log(`cgroups: ${chosen.limitsProblem}; containers run without their resource limits`);
  // The node's own events (no pod's): told like the loop's and saved at once.
  const nodeEvents = (events: KubeEvent[]) => {
    for (const event of events) onEvent(event);
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
  if (kubeletServer && "failure" in kubeletServer) log(`kubelet server: ${kubeletServer.failure}; the agent runs its pods without its kubelet endpoints`);
  const probes = new ProbeManager({ runner: new Prober({ clock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }), clock, metrics: metrics.recorder });
  const refusedFiles = new Set<string>();
  const removalReason = (source: string) => (refusedFiles.has(source) ? "turned invalid" : undefined);
  const capacity = readHostCapacity(runtimeRootOf(dbPath));
  const allocatable = nodeAllocatable(capacity, options.reservations, options.maxPods);
  const oomScores = { memoryCapacityBytes: BigInt(capacity.memoryTotalKi) * 1024n, lowest: lowestOomScoreAdj() };
  const nodeConditions = { diskPressure: () => disk?.pressure ?? false };
  // Node mode: the ConfigMaps, Secrets, Services and tokens the cluster's pods reference, read with the node's credentials.
  // On one host: the ConfigMaps and Secrets created through the agent's own API.
  const podObjects = cluster && new PodObjectCache({ client: cluster.client, clock, log });
  const objects = podObjects ?? new StoreObjectSource({ db: database.db, objects: sources.writes.objects, ...(api && "url" in api && { api: agentApiForPods(api, database.db) }) });
  const kubelet = new Kubelet({ runtime, pleg, clock, backoff: options.backoff, store, probes, log, removalReason, allocatable, oomScores, node: nodeConditions, metrics: metrics.recorder, objects });
  loop.kubelet = kubelet;
  kubelet.recorder.subscribe(onEvent);
  // Node mode's status reports a change at once; it starts below, so it is reached through this holder.
  const nodeStatusWake = { changed: () => {} };
  disk = startNodeMonitor({ db: database.db, dbPath, nodeName, reservations: options.reservations, clock, log, emit: nodeEvents, changed: () => (kubelet.nodeConditionsChanged(), nodeStatusWake.changed()) });
  if (options.statusFile) writeStatusOnSync(kubelet, resolve(options.statusFile), clock, log);
  // The engine's version, asked once (the kubelet asks the CRI's Version): the Node reports it once known.
  let engineVersion: string | undefined;
  if (options.cluster) runtime.version?.().then((version) => (engineVersion = version), (error) => log(`runtime: cannot read the engine's version: ${(error as Error).message}`));
  const nodeMode = cluster
    ? startNodeMode({
        credentials: cluster.credentials,
        client: cluster.client,
        nodeName,
        clock,
        log,
        podObjects,
        node: {
          facts: () => readHostFacts(dbPath),
          reservations: options.reservations,
          maxPods: options.maxPods,
          runtimeName: runtime.name,
          engineVersion: () => engineVersion,
          pleg: () => pleg.healthy(),
          diskPressure: () => disk?.condition(),
          kubeletPort: () => kubeletEndpoint?.port ?? 0,
          nodeIP: cluster.nodeIP ?? "127.0.0.1",
        },
        // Its pods' callbacks reach the watcher and the gate below only once the cluster has answered a
        // list, which cannot happen before this function has run to its end (no await in between).
        pods: { kubelet, sources, rules, rescan: () => watcher.scan(), loopOpen: () => gate.open },
      })
    : undefined;
  if (nodeMode) nodeStatusWake.changed = () => nodeMode.nodeConditionsChanged();

  // A rescan that found nothing new is no pass: pods wake on their PLEG events and timers, and the
  // PLEG's relist finds what an event stream lost, so a thousand quiet pods cost no pass.
  const changes = new DesiredChanges();
  let sourcesWereReady = false;
  let passedOnce = false;
  // Nothing is created or stopped before the directory has been read once ("sources ready") and
  // the checkpoint and the runtime have been matched: adoption, not restart, retried until it works.
  const gate = new AdoptionGate({
    adopt: (desired) => adoptFromRuntime({ kubelet, runtime, store, clock, node, database: identity }, desired),
    sync: (desired) => {
      kubelet.noteSyncLoopIteration();
      // Node mode: until the cluster's pods have been listed once, a pod missing from the set may be one of them.
      const ready = sources.ready();
      if (changes.worthSyncing(desired) || ready !== sourcesWereReady) {
        // The first pass after adoption syncs every pod (adoption dispatched none); later ones only what changed.
        void kubelet.sync(desired, { sourcesReady: ready, changedOnly: passedOnce });
        passedOnce = true;
      }
      sourcesWereReady = ready;
      sources.removeFinished();
    },
    clock,
    log,
  });
  const onFiles = (pods: Map<string, PodSpec>) => gate.offer(sources.desired(pods));
  const reporting = refusedManifestReporting({ store, rules: { ...rules, strict: options.strict }, clock, refusedFiles, print: (events) => events.forEach(onEvent), log });
  // An API pod's fields the agent does not honour are told as a file's are: one UnsupportedField event each.
  sources.api.onWarnings((pod, warnings) => reporting.onWarnings?.(pod, warnings));
  const watcher: Pick<ManifestWatcher, "start" | "stop" | "scan"> = dir === undefined ? noManifests(onFiles) : new ManifestWatcher({
    dir,
    node,
    clock,
    resyncMs,
    // Both sources in one desired set; a file never defines a key the API holds (`taken`).
    onPods: onFiles,
    taken: () => sources.api.taken(),
    ...reporting,
    onReadFailure: (message) => options.stderr(`error: ${message}`),
  });
  pleg.start();
  kubelet.start();
  watcher.start();
  stats.start();
  sources.attach(kubelet, () => watcher.scan());
  // Expiry follows the writes; a quiet agent (no pass writes anything) still ages its history out.
  const expiry = setInterval(() => store.expireIfDue(), EXPIRY_CHECK_MS);

  /** Stops taking work: no more scans, API writes or adoption; the loop itself still runs. */
  const quiesce = async () => {
    clearInterval(expiry);
    await stats.stop();
    disk?.stop();
    if (api && "stop" in api) await api.stop();
    await kubeletEndpoint?.stop();
    watcher.stop();
    await gate.stop();
    await nodeMode?.stop();
  };
  const release = async () => {
    kubelet.stop();
    pleg.stop();
    await chosen.unlock?.();
    await runtime.close();
    database.close();
  };
  return {
    async stop() {
      await quiesce();
      // A kubelet restart never stops workloads: the next agent adopts them, as after kill -9.
      await kubelet.idle();
      const pods = kubelet.servedPods();
      await release();
      return pods;
    },
    async shutdown() {
      await quiesce();
      const final = new Map<string, V1Pod>();
      for (const pod of kubelet.servedPods()) final.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
      kubelet.onPodSynced((pod, object) => final.set(pod.spec.key, object));
      await kubelet.shutdown();
      await release();
      return [...final.values()];
    },
    async unlock() {
      await chosen.unlock?.();
    },
  };
}

/** The file source of an agent without a manifest directory (node mode may run none): every scan finds no pods. */
function noManifests(onPods: (pods: Map<string, PodSpec>) => void): Pick<ManifestWatcher, "start" | "stop" | "scan"> {
  return { start: () => onPods(new Map()), scan: () => onPods(new Map()), stop: () => {} };
}

/** Writes the pods as a v1 List shortly after each burst of passes. */
function writeStatusOnSync(kubelet: Kubelet, file: string, clock: Clock, log: (message: string) => void): void {
  let cancel: (() => void) | undefined;
  kubelet.onPodSynced(() => {
    cancel ??= clock.setTimeout(() => {
      cancel = undefined;
      try {
        writeStatusFile(file, kubelet.servedPods());
      } catch (error) {
        log(`writing ${file}: ${(error as Error).message}`);
      }
    }, STATUS_WRITE_DELAY_MS);
  });
}

/**
 * The soft open-files limit raised to the hard one, and the connections the two servers may hold
 * within it less the loop's reserve: the API three parts, the kubelet's endpoints one. Past its
 * share a server closes a new connection at accept, so a flood of them never takes a descriptor
 * the loop needs (a manifest read, a container's log, a database write).
 */
function connectionBudget(limits: ApiLimits, log: (message: string) => void): { api: ApiLimits; kubelet: number } {
  let soft: number;
  try {
    soft = raiseOpenFilesLimit().soft;
  } catch (error) {
    soft = Number.MAX_SAFE_INTEGER;
    log(`open files: ${(error as Error).message}; the API's connections are bounded by --max-connections alone`);
  }
  const total = connectionsWithin(soft, Number.MAX_SAFE_INTEGER);
  const kubelet = Math.max(1, Math.min(DEFAULT_LIMITS.maxConnections, Math.floor(total / 4)));
  return { api: { ...limits, maxConnections: Math.max(1, Math.min(limits.maxConnections, total - kubelet)) }, kubelet };
}

/** The agent's API as its own pods see it: the `kubernetes` Service's address, and its TokenRequest without HTTP. */
function agentApiForPods(api: RunningApi, db: Database) {
  const url = new URL(api.url);
  const listened = url.hostname.replace(/^\[|\]$/g, "");
  // A wildcard listen is reached on loopback, which the serving certificate names.
  const host = listened === "0.0.0.0" ? "127.0.0.1" : listened === "::" ? "::1" : listened;
  const tokens = api.tokens;
  return {
    host,
    port: Number(url.port),
    issueToken: async (request: TokenRequestInput): Promise<IssuedToken> => {
      if (!tokens) throw new Error("the agent's API issues no tokens");
      const issued = await issueBoundToken(db, tokens, {
        namespace: request.namespace,
        serviceAccount: request.serviceAccount,
        pod: { name: request.podName, uid: request.podUid },
        audiences: request.audiences,
        expirationSeconds: request.expirationSeconds,
      });
      return { token: issued.token, expiresAt: issued.expiresAt };
    },
  };
}
