/**
 * `minikubelet run`: assembles the agent (source watcher, runtime, prober, store, loop), prints one
 * line per event, and on SIGINT/SIGTERM stops the pods (process runtime, or docker with
 * --stop-pods-on-exit) and prints the final table.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { realClock } from "../clock.ts";
import { backoffSettings } from "../kubelet/backoff.ts";
import type { KubeEvent } from "../kubelet/events.ts";
import { Kubelet } from "../kubelet/kubelet.ts";
import { ManifestWatcher } from "../kubelet/manifest-watcher.ts";
import type { PodRecord } from "../kubelet/pod-state.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { podObject } from "../status/pod-object.ts";
import { formatPods } from "../status/pod-table.ts";
import { writeStatusFile } from "../status/status-file.ts";
import { UsageError, UserError } from "./cli.ts";
import { secondsOption } from "./options.ts";
import { resolveDbPath } from "../store/db-path.ts";
import { openAgentDatabase } from "../store/open.ts";
import { SqliteStore } from "../store/pod-store.ts";
import { ProbeManager } from "../prober/probe-manager.ts";
import { Prober } from "../prober/prober.ts";
import { AdoptionGate, adoptFromRuntime } from "../kubelet/adoption-gate.ts";

export interface RunOptions {
  db?: string;
  manifests?: string;
  node?: string;
  runtime?: string;
  statusFile?: string;
  backoffBase?: unknown;
  backoffMax?: unknown;
  stopPodsOnExit?: boolean;
  pauseImage?: string;
  resync?: unknown;
}

/** Status-file writes are coalesced: a burst of pod syncs costs one write. */
const STATUS_WRITE_DELAY_MS = 200;

export async function runCommand(options: RunOptions): Promise<number> {
  if (!options.manifests) throw new UsageError("run needs --manifests DIR");
  const dir = resolve(options.manifests);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`--manifests: ${dir} is not a directory`);
  const backoff = backoffSettings({
    baseSeconds: secondsOption("--backoff-base", options.backoffBase ?? 10),
    capSeconds: secondsOption("--backoff-max", options.backoffMax ?? 300),
  });
  const resyncMs = secondsOption("--resync", options.resync ?? 20) * 1000;
  const node = String(options.node ?? "");
  const dbPath = resolveDbPath(options.db);
  const clock = realClock;
  const started = clock.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const err = (line: string) => process.stderr.write(`${line}\n`);
  const log = (message: string) => err(`minikubelet: ${message}`);

  // Listening first: a SIGTERM during start-up must stop the pods like any other, not kill the agent.
  const signalled = waitForSignal();
  // The lock next: a second agent on the same database must not touch the runtime at all.
  const database = openAgentDatabase(dbPath);
  const { runtime, logPathOf } = await createRuntime(options, dbPath);
  const store = new SqliteStore({ db: database.db, clock, runtimeName: runtime.name, logPathOf, log });
  const probes = new ProbeManager(new Prober({ clock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }), clock);
  const kubelet = new Kubelet({ runtime, clock, backoff, store, probes, log });
  kubelet.recorder.subscribe((event) => out(eventLine(event, started)));

  const objects = () => [...kubelet.pods.values()].map((pod) => podObject(pod, { runtimeName: runtime.name }));
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

  // Nothing is created or stopped before the directory has been read once ("sources ready") and
  // the checkpoint and the runtime have been matched: adoption, not restart, retried until it works.
  const gate = new AdoptionGate({
    adopt: (desired) => adoptFromRuntime({ kubelet, runtime, store, clock, node }, desired),
    sync: (desired) => void kubelet.sync(desired),
    clock,
    log,
  });
  const watcher = new ManifestWatcher({
    dir,
    node,
    clock,
    resyncMs,
    onPods: (pods) => gate.offer(pods),
    onError: (error) => err(`error: ${error.message}`),
    onReadFailure: (message) => err(`error: ${message}`),
  });
  kubelet.start();
  watcher.start();

  await signalled;
  watcher.stop();
  await gate.stop();
  const stopPods = runtime.name === "process" || options.stopPodsOnExit === true;
  if (stopPods) {
    err("minikubelet: stopping pods (press Ctrl-C again to exit at once)");
    const final = new Map<string, PodRecord>();
    kubelet.onPodSynced((pod) => final.set(pod.spec.key, pod));
    for (const pod of kubelet.pods.values()) final.set(pod.spec.key, pod);
    await kubelet.shutdown();
    kubelet.stop();
    out("");
    // How each pod ended, not "Terminating": the deletion is what the user asked for.
    const ended = [...final.values()].map((pod) => podObject({ ...pod, deletionRequestedAt: undefined }, { runtimeName: runtime.name }));
    out(formatPods(ended, { now: clock.now() }).trimEnd());
  } else {
    await kubelet.idle();
    kubelet.stop();
    out("");
    out(formatPods(objects(), { now: clock.now() }).trimEnd());
    err("minikubelet: pods left running (docker runtime); --stop-pods-on-exit stops them");
  }
  await runtime.close();
  database.close();
  return 0;
}

/** `4.1s Warning BackOff demo/crash-lab crash: Back-off restarting ...` */
export function eventLine(event: KubeEvent, started: number): string {
  const seconds = ((event.at - started) / 1000).toFixed(1);
  const subject = event.container ? `${event.namespace}/${event.pod} ${event.container}` : `${event.namespace}/${event.pod}`;
  return `${seconds}s ${event.type} ${event.reason} ${subject}: ${event.message}`;
}

interface RuntimeChoice {
  runtime: Runtime;
  /** Where an attempt's output file is, for `logs` (the process runtime keeps one per attempt). */
  logPathOf?: (podUid: string, containerId: string) => string | undefined;
}

async function createRuntime(options: RunOptions, dbPath: string): Promise<RuntimeChoice> {
  const name = options.runtime ?? "process";
  switch (name) {
    case "process": {
      const { ProcessRuntime } = await import("../runtime/process.ts");
      const { ProcessLayout } = await import("../runtime/process-files.ts");
      const rootDir = join(dirname(dbPath), "process");
      mkdirSync(rootDir, { recursive: true });
      const layout = new ProcessLayout(rootDir);
      return { runtime: new ProcessRuntime({ rootDir }), logPathOf: (uid, id) => join(layout.containerDir(uid, id), "log") };
    }
    case "docker": {
      const { DockerRuntime } = await import("../runtime/docker.ts");
      return { runtime: new DockerRuntime({ pauseImage: options.pauseImage, volumeRoot: join(dirname(dbPath), "volumes") }) };
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
