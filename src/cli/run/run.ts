/**
 * `minikubelet run`: checks every flag, starts the agent (agent/agent.ts) and prints one line per
 * event; on SIGINT/SIGTERM it leaves the pods running for the next agent to adopt, as a kubelet
 * restart does (or stops them first with --stop-pods-on-exit), then prints the final table.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { startAgent } from "../../agent/agent.ts";
import type { NodeServingOptions } from "../../agent/kubelet-server.ts";
import { realClock } from "../../clock.ts";
import type { KubeEvent } from "../../v1/kube-event.ts";
import { formatPods } from "../../printers/pod-table.ts";
import { resolveDbPath } from "../../store/db-path.ts";
import { apiLimitsOption, type ApiLimitFlags } from "./api-limits.ts";
import { apiListenOption, kubeletListenOption } from "./api-listen.ts";
import { UsageError, UserError } from "../errors.ts";
import { KubeconfigError, readKubeconfig, type ClusterCredentials } from "../../node/kubeconfig.ts";
import { identityOfCertificate } from "../../node/node-identity.ts";
import { backoffOptions, housekeepingIntervalOption, logPolicyOption, maxPodsOption, nodeOption, nodeReservationsOption, podMaxPidsOption, retentionOptions, secondsOption } from "../options.ts";

export interface RunOptions extends ApiLimitFlags {
  db?: string;
  manifests?: string;
  kubeconfig?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCaFile?: string;
  /** cac turns a numeric-looking value into a number, hence unknown. */
  node?: unknown;
  nodeIp?: unknown;
  runtime?: string;
  statusFile?: string;
  backoffBase?: unknown;
  backoffMax?: unknown;
  stopPodsOnExit?: boolean;
  pauseImage?: string;
  resync?: unknown;
  strict?: boolean;
  apiListen?: string;
  kubeletListen?: string;
  containerLogMaxSize?: unknown;
  containerLogMaxFiles?: unknown;
  podMaxPids?: unknown;
  eventTtl?: unknown;
  housekeepingInterval?: unknown;
  maxEventsPerPod?: unknown;
  evictionHard?: unknown;
  systemReserved?: unknown;
  kubeReserved?: unknown;
  maxPods?: unknown;
}

export async function runCommand(options: RunOptions): Promise<number> {
  if (!options.manifests && !options.kubeconfig) throw new UsageError("run needs --manifests DIR (or --kubeconfig FILE to join a cluster)");
  const dir = options.manifests ? resolve(options.manifests) : undefined;
  if (dir !== undefined && (!existsSync(dir) || !statSync(dir).isDirectory())) throw new UserError(`--manifests: ${dir} is not a directory`);
  const cluster = options.kubeconfig ? clusterOption(options.kubeconfig, options.node) : undefined;
  const serving = servingOptions(options, cluster !== undefined);
  const nodeIP = nodeIPOption(options.nodeIp, cluster !== undefined);
  const runtime = options.runtime ?? "process";
  if (runtime !== "process" && runtime !== "docker") throw new UsageError(`--runtime must be process or docker (got ${JSON.stringify(runtime)})`);
  // Every flag is checked before anything starts: a bad one must not leave a database or a runtime root behind.
  const flags = {
    backoff: backoffOptions(options),
    resyncMs: options.resync === undefined ? undefined : secondsOption("--resync", options.resync) * 1000,
    node: cluster?.node ?? nodeOption(options.node),
    // In node mode the cluster's API server is the API: the agent's own is off unless asked for.
    api: apiListenOption(options.apiListen ?? (cluster ? "off" : undefined)),
    apiLimits: apiLimitsOption(options),
    kubeletListen: kubeletListenOption(options.kubeletListen),
    logPolicy: logPolicyOption(options),
    podMaxPids: podMaxPidsOption(options.podMaxPids),
    retention: retentionOptions(options),
    reservations: nodeReservationsOption(options),
    maxPods: maxPodsOption(options.maxPods),
    housekeepingIntervalMs: housekeepingIntervalOption(options.housekeepingInterval),
  };
  const clock = realClock;
  const started = clock.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const stderr = (line: string) => process.stderr.write(`${line}\n`);
  const log = (message: string) => stderr(`minikubelet: ${message}`);

  // Listening first: a SIGTERM during start-up must end the agent the same orderly way, not kill it mid-write.
  let unlock = async () => {};
  const signalled = waitForSignal(() => unlock());
  const agent = await startAgent({
    ...flags,
    dbPath: resolveDbPath(options.db),
    manifests: dir,
    ...(cluster && { cluster: { credentials: cluster.credentials, serving, nodeIP } }),
    runtime,
    strict: options.strict === true,
    ...(options.pauseImage !== undefined && { pauseImage: options.pauseImage }),
    ...(options.statusFile !== undefined && { statusFile: options.statusFile }),
    clock,
    onEvent: (event) => out(eventLine(event, started)),
    log,
    stderr,
  });
  unlock = () => agent.unlock();
  await signalled;
  if (options.stopPodsOnExit === true) {
    stderr("minikubelet: stopping pods (press Ctrl-C again to exit at once)");
    const ended = await agent.shutdown();
    out("");
    // How each pod ended, not "Terminating": the deletion is what the user asked for. Every
    // namespace's pods, so with its NAMESPACE column, as `get pods -A` prints them.
    const shown = ended.map(({ metadata: { deletionTimestamp: _asked, deletionGracePeriodSeconds: _grace, ...metadata }, ...pod }) => ({ ...pod, metadata }));
    out(formatPods(shown, { now: clock.now(), allNamespaces: true }).trimEnd());
  } else {
    const left = await agent.stop();
    out("");
    out(formatPods(left, { now: clock.now(), allNamespaces: true }).trimEnd());
    stderr("minikubelet: pods left running for the next agent to adopt; --stop-pods-on-exit stops them");
  }
  return 0;
}

/** `4.1s Warning BackOff demo/crash-lab crash: Back-off restarting ...` */
export function eventLine(event: KubeEvent, started: number): string {
  const seconds = ((event.at - started) / 1000).toFixed(1);
  const subject = event.container ? `${event.namespace}/${event.pod} ${event.container}` : `${event.namespace}/${event.pod}`;
  return `${seconds}s ${event.type} ${event.reason} ${subject}: ${event.message}`;
}

/** How long an exit at once waits for the node lock's release (docker: one engine call) before it goes anyway. */
const UNLOCK_BOUND_MS = 2_000;

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once, giving up the node lock on the way (`unlock`). */
function waitForSignal(unlock: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      // A second signal while pods are stopping means "now", but not leaving the node locked for the next agent.
      const force = () => {
        const bound = new Promise((done) => setTimeout(done, UNLOCK_BOUND_MS));
        void Promise.race([unlock().catch(() => {}), bound]).finally(() => process.exit(130));
      };
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      resolve();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

/** `--node-ip`: an IP address, and only in node mode (the local API's Node is at 127.0.0.1). */
function nodeIPOption(value: unknown, nodeMode: boolean): string {
  if (value === undefined) return "127.0.0.1";
  if (!nodeMode) throw new UsageError("--node-ip needs --kubeconfig (it is the address the cluster reaches the node at)");
  if (typeof value !== "string" || isIP(value) === 0) throw new UsageError(`--node-ip must be an IP address (got ${JSON.stringify(value)})`);
  return value;
}

/**
 * The kubelet port's serving flags, node mode's only: the certificate and key (both or neither,
 * as the kubelet wants them) and the client CA, read now so a bad file stops `run` before it starts.
 */
function servingOptions(options: RunOptions, nodeMode: boolean): NodeServingOptions {
  const given = ([["--tls-cert-file", options.tlsCertFile], ["--tls-private-key-file", options.tlsPrivateKeyFile], ["--client-ca-file", options.clientCaFile]] as const).filter(([, file]) => file !== undefined);
  if (!nodeMode && given.length > 0) throw new UsageError(`${given[0]![0]} serves the kubelet port in node mode: give --kubeconfig too`);
  if ((options.tlsCertFile === undefined) !== (options.tlsPrivateKeyFile === undefined)) throw new UsageError("--tls-cert-file and --tls-private-key-file go together");
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      throw new UserError(`${flag}: cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const serving: NodeServingOptions = {};
  if (options.tlsCertFile !== undefined && options.tlsPrivateKeyFile !== undefined) serving.tls = { cert: read("--tls-cert-file", options.tlsCertFile), key: read("--tls-private-key-file", options.tlsPrivateKeyFile) };
  if (options.clientCaFile !== undefined) serving.clientCa = read("--client-ca-file", options.clientCaFile);
  return serving;
}

/**
 * `--kubeconfig` and the node name it joins as: `--node`, else the client certificate's
 * `system:node:NAME` (the only Node those credentials may write). A kubeconfig that cannot be used
 * is bad input (exit 1) naming the file and the field.
 */
function clusterOption(file: string, nodeFlag: unknown): { credentials: ClusterCredentials; node: string } {
  let credentials: ClusterCredentials;
  try {
    credentials = readKubeconfig(file);
  } catch (error) {
    if (error instanceof KubeconfigError) throw new UserError(`--kubeconfig: ${error.message}`);
    throw error;
  }
  const given = nodeOption(nodeFlag);
  if (given !== "") return { credentials, node: given };
  let certified: string | undefined;
  try {
    certified = credentials.cert === undefined ? undefined : identityOfCertificate(credentials.cert).node;
  } catch (error) {
    throw new UserError(`--kubeconfig: ${file}: the client certificate cannot be read: ${(error as Error).message}`);
  }
  if (certified === undefined) throw new UsageError("--kubeconfig: its user is not a node (no client certificate with CN system:node:NAME): give --node NAME");
  return { credentials, node: nodeOption(certified) };
}
