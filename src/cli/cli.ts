/**
 * The command line, declared as data and free of side effects: `createCLI()` builds the parser,
 * actions only parse and call one command module, and `runCLI()` turns errors into exit codes
 * (0 ok, 1 bad input or failed check, 2 usage) with one line on stderr.
 */
import { cac, type CAC } from "cac";
import { DEFAULT_KUBELET_LISTEN, DEFAULT_RESYNC_SECONDS } from "../agent/defaults.ts";
import { DEFAULT_API_LISTEN } from "../api/http/listen-address.ts";
import { DEFAULT_BACKOFF_SECONDS } from "../kubelet/backoff.ts";
import { DEFAULT_PAUSE_IMAGE } from "../runtime/docker/pause-image.ts";
import { versionLine } from "../version.ts";
import { describeCommands } from "./help.ts";
import { NotFoundError, UsageError } from "./errors.ts";
import { writeStdout } from "./stdio.ts";

export type CommandResult = number | void;

const dbOption = ["--db <path>", "state database (default: $MINIKUBELET_DB, else the per-user state directory)"] as const;

export function createCLI(): CAC {
  const cli = cac("minikubelet");

  cli
    .command("run", "run the agent: keep processes matching the manifests in --manifests")
    .option(...dbOption)
    .option("--manifests <dir>", "directory of Pod manifests (static pods); optional with --kubeconfig")
    .option("--node <name>", "node name; pods are named NAME-NODE like mirror pods (with --kubeconfig, default: the client certificate's system:node:NAME)", { default: "" })
    .option("--kubeconfig <file>", "node mode: join the cluster this kubeconfig names as node --node, with its credentials (the local API is then off unless --api-listen is given)")
    .option("--tls-cert-file <file>", "node mode: the kubelet port's serving certificate (PEM; default: a self-signed one)")
    .option("--tls-private-key-file <file>", "node mode: the key of --tls-cert-file (PEM)")
    .option("--client-ca-file <file>", "node mode: client certificates this CA signed authenticate to the kubelet port (default: the kubeconfig's cluster CA)")
    .option("--node-ip <ip>", "node mode: the InternalIP the Node reports, where the API server reaches its kubelet port (default 127.0.0.1)")
    .option("--runtime <name>", "process or docker", { default: "process" })
    .option("--strict", "refuse manifests with unknown fields (default: warn)")
    .option("--status-file <file>", "write the pods as a v1 List after each pass (atomically)")
    .option("--backoff-base <seconds>", `first restart back-off (default: ${DEFAULT_BACKOFF_SECONDS.base}, or --backoff-max when lower)`)
    .option("--backoff-max <seconds>", `back-off cap (default: ${DEFAULT_BACKOFF_SECONDS.cap})`)
    .option("--stop-pods-on-exit", "stop the pods (SIGTERM, grace, SIGKILL) when the agent exits; by default they keep running for the next agent")
    .option("--pause-image <image>", `docker runtime: sandbox image (default: ${DEFAULT_PAUSE_IMAGE})`)
    .option("--resync <seconds>", `periodic full rescan of the manifest directory (default: ${DEFAULT_RESYNC_SECONDS})`)
    .option("--api-listen <addr>", `serve the Kubernetes API (HTTPS, bearer token) on HOST:PORT, or off (default: ${DEFAULT_API_LISTEN})`)
    .option("--kubelet-listen <addr>", `serve the kubelet's own endpoints (/healthz, /pods, /metrics, /stats/summary ...; HTTPS, the API's token; with --kubeconfig, whom the cluster authorizes) on HOST:PORT, or off (default: ${DEFAULT_KUBELET_LISTEN})`)
    .option("--container-log-max-size <size>", "rotate a container's log when it reaches this size (default: 10Mi)")
    .option("--container-log-max-files <n>", "log files kept per container, the current one included, at least 2 (default: 5)")
    .option("--event-ttl <duration>", "keep events, and deleted pods for describe, this long (default: 24h)")
    .option("--max-events-per-pod <n>", "keep at most this many events per pod, the newest (default: 1000)")
    .option("--pod-max-pids <n>", "most processes a container may run (docker PidsLimit, pids cgroup on the process runtime); --pod-max-pids=-1 is no limit (the default)")
    .option(
      "--eviction-hard <thresholds>",
      "kubelet syntax, taken off allocatable; below nodefs.available the node has DiskPressure and new pods wait (default: memory.available<100Mi,nodefs.available<10%)",
    )
    .option("--system-reserved <list>", "kept from pods, taken off allocatable: cpu=500m,memory=1Gi,ephemeral-storage=10Gi")
    .option("--kube-reserved <list>", "the same, for the agent's own use (added to --system-reserved)")
    .option("--max-pods <n>", "most pods admitted at once (default: 110, the kubelet's)")
    .option("--housekeeping-interval <duration>", "between two readings of the node's and containers' cpu and memory, for kubectl top (default: 10s)")
    .option("--max-requests-inflight <n>", "API reads served at once, long-running ones (watch, logs, exec) not counted; one more is a 429 with Retry-After; 0 is no limit (default: 400, the API server's)")
    .option("--max-mutating-requests-inflight <n>", "API writes served at once; one more is a 429; 0 is no limit (default: 200)")
    .option("--request-timeout <duration>", "an API request that is not long-running and has no answer by then is a 504 Timeout (default: 1m)")
    .option("--min-request-timeout <seconds>", "a watch without timeoutSeconds ends after between this and twice this (default: 1800)")
    .option("--max-streams-per-client <n>", "watches and followed logs one client address may hold open; one more is a 429 (default: 100)")
    .option("--tls-handshake-timeout <duration>", "an API connection whose TLS handshake is not done this long after its accept is closed (default: 10s)")
    .option("--read-header-timeout <duration>", "an API connection whose first request head is not complete this long after its accept is closed, however it trickles (default: 32s)")
    .option("--max-connections <n>", "API connections open at once, one more closed at accept; lowered to fit the open-files limit less a reserve for the loop (default: 4000)")
    .action(async (options) => (await import("./run/run.ts")).runCommand(options));

  cli
    .command("kubeconfig", "print a kubeconfig for kubectl to reach the agent's API (run or serve)")
    .option(...dbOption)
    .option("--output <file>", "write it to FILE (0600, atomically; its directory made 0700 if missing) instead of stdout")
    .action(async (options) => (await import("./kubeconfig.ts")).kubeconfigCommand(options));

  cli
    .command("serve", "serve the read API from the database alone, without running pods (a stopped agent's history)")
    .option(...dbOption)
    .option("--api-listen <addr>", `HOST:PORT (default: ${DEFAULT_API_LISTEN})`)
    .option("--node <name>", "the node's name (default: the host name)", { default: "" })
    .action(async (options) => (await import("./serve.ts")).serveCommand(options));

  cli
    .command("validate <path>", "check every manifest in a directory, or one file, as run would; print each pod and its probes")
    .option("--node <name>", "node name", { default: "" })
    .option("--runtime <name>", "apply this runtime's rules too: process or docker", { default: "process" })
    .option("--strict", "unknown fields are errors, not warnings")
    .option("--review", "then review each valid pod's probes, as review does (exit 1 on a warning finding)")
    .action(async (dir, options) => (await import("./validate.ts")).validateCommand(dir, options));

  cli
    .command("review <path>", "review the probes of each Pod or workload in a file or directory (exit 0: no warning or error finding; 1: some, or a bad file)")
    .option("-o, --output <format>", "text, json (the findings as data) or yaml (the corrected manifests, each change commented)", { default: "text" })
    .option("--describe <file>", "back the findings with a `kubectl describe pod` text (its events and restarts)")
    .option(...dbOption)
    .option("--pod <name>", "back the findings with this pod's events and attempts in the database")
    .option("-n, --namespace <ns>", "the pod's namespace, when its name is in several")
    .action(async (path, options) => (await import("./review.ts")).reviewCommand(path, options));

  cli
    .command("backoff", "print the restart back-off schedule")
    .option("--backoff-base <seconds>", `first restart back-off (default: ${DEFAULT_BACKOFF_SECONDS.base}, or --backoff-max when lower)`)
    .option("--backoff-max <seconds>", `back-off cap (default: ${DEFAULT_BACKOFF_SECONDS.cap})`)
    .action(async (options) => (await import("./backoff.ts")).backoffCommand(options));

  cli
    .command("get <resource> [name]", "list pods like kubectl get pods")
    .option(...dbOption)
    .option("-f, --filename <file>", "read a v1 Pod, PodList or List instead of the database")
    .option("-n, --namespace <ns>", "namespace")
    .option("-A, --all-namespaces", "all namespaces")
    .option("-o, --output <format>", "wide, json, yaml or name")
    .option("-w, --watch", "print a new row when a pod changes")
    .action(async (resource, name, options) => (await import("./get/get.ts")).getCommand(resource, name, options));

  cli
    .command("describe <resource> [name]", "describe a pod like kubectl describe pod")
    .option(...dbOption)
    .option("-n, --namespace <ns>", "namespace")
    .action(async (resource, name, options) => (await import("./describe/describe.ts")).describeCommand(resource, name, options));

  cli
    .command("events", "list events like kubectl events")
    .option(...dbOption)
    .option("-n, --namespace <ns>", "only this namespace (default: all)")
    .option("-A, --all-namespaces", "all namespaces")
    .option("--for <object>", "only events of pod/NAME")
    .option("--types <types>", "comma-separated: Normal, Warning")
    .option("-o, --output <format>", "json")
    .option("-w, --watch", "keep printing new events")
    .action(async (options) => (await import("./events/events.ts")).eventsCommand(options));

  cli
    .command("logs <pod>", "print a container's output")
    .option(...dbOption)
    .option("-n, --namespace <ns>", "namespace (default: the pod's, when the name is unique)")
    .option("-c, --container <name>", "container name (default: the only or first container)")
    .option("-p, --previous", "the previous attempt's output")
    .option("-f, --follow", "keep printing new output")
    .option("--tail <lines>", "only the last N lines")
    .action(async (pod, options) => {
      const [{ logsCommand }, { dockerLogReader, dockerLogFollower }] = await Promise.all([import("./logs/logs.ts"), import("./logs/docker-log-reader.ts")]);
      // Attempts without a log file are docker's: their output is read from the engine.
      return logsCommand(pod, options, { readLogs: dockerLogReader(), followLogs: dockerLogFollower() });
    });

  cli
    .command("triage <pod>", "explain why a container restarts or does not start: verdict, evidence, back-off, next steps")
    .option(...dbOption)
    .option("-n, --namespace <ns>", "namespace (default: the pod's, when the name is unique)")
    .option("-c, --container <name>", "container name (default: the one in trouble)")
    .option("-o, --output <format>", "text, json or markdown", { default: "text" })
    .option("--backoff-base <seconds>", `override the back-off the agent recorded at its start (default: the record, else ${DEFAULT_BACKOFF_SECONDS.base})`)
    .option("--backoff-max <seconds>", `override the recorded cap (default: the record, else ${DEFAULT_BACKOFF_SECONDS.cap}); the back-off resets after twice it`)
    .action(async (pod, options) => {
      const [{ triageCommand }, { dockerLogReader }] = await Promise.all([import("./triage.ts"), import("./logs/docker-log-reader.ts")]);
      return triageCommand(pod, options, { readEngineLogs: dockerLogReader() });
    });

  cli
    .command("sql [query]", "run a read-only SQL query on the state database")
    .option(...dbOption)
    .option("-o, --output <format>", "json")
    .option("--schema", "print the tables' CREATE statements")
    .option("--timeout <duration>", "stop a query still running after this long (default: 30s)")
    .action(async (query, options) => (await import("./sql.ts")).sqlCommand(query, options));

  cli
    .command("install-unit", "install the binary and the systemd unit (Restart=always; pods outlive the agent's restarts)")
    .option("--manifests <dir>", "manifests directory the service watches", { default: "/etc/minikubelet/manifests" })
    .option("--bin <path>", "where the binary goes; the unit runs it from there", { default: "/usr/local/bin/minikubelet" })
    .option("--root <dir>", "install under this directory instead of / (image builds, tests)")
    .option("--dry-run", "print what would be written, write nothing")
    .action(async (options) => (await import("./install-unit.ts")).installUnitCommand(options));

  cli
    .command("timeline <pod>", "draw the pod's restart history on a time axis: attempts, back-off waits, probe failures")
    .option(...dbOption)
    .option("-n, --namespace <ns>", "namespace (default: the pod's, when the name is unique)")
    .option("-c, --container <name>", "only this container's row")
    .option("-o, --output <format>", "text, svg (to stdout), or FILE.svg (written atomically)")
    .option("--width <columns>", "fit this many columns (default: the terminal's, 80 to 200; 100 without one; svg 120)")
    .action(async (pod, options) => (await import("./timeline.ts")).timelineCommand(pod, options));

  describeCommands(cli);
  // Our own --version line: cac's names the platform and a Node version, which is Bun's emulation.
  cli.option("-v, --version", "print the version");
  return cli;
}

/** Parses argv (without the node and script entries), runs the command, returns the exit code. */
export async function runCLI(argv: string[]): Promise<number> {
  const cli = createCLI();
  try {
    cli.parse(["minikubelet", "minikubelet", ...argv], { run: false });
    if (cli.options.version && !cli.matchedCommand) {
      writeStdout(`${versionLine()}\n`);
      return 0;
    }
    if (cli.options.help) return 0;
    if (!cli.matchedCommand) {
      if (argv.length === 0) {
        cli.outputHelp();
        return 2;
      }
      throw new UsageError(`unknown command "${argv[0]}"; see minikubelet --help`);
    }
    const result = await cli.runMatchedCommand();
    return typeof result === "number" ? result : 0;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  const isUsage = error instanceof UsageError || (error instanceof Error && error.name === "CACError");
  process.stderr.write(error instanceof NotFoundError ? `${message}\n` : `error: ${message}\n`);
  return isUsage ? 2 : 1;
}
