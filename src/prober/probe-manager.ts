/**
 * The prober manager, like the kubelet's: one worker per (container attempt, probe kind), each on
 * its own timer, writing its verdicts into the results cache (results.ts). It decides nothing: the
 * sync loop reads the verdicts and kills, restarts or marks ready, and this module never imports
 * the loop. Probes run concurrently and never block a pass. Startup gates the other two.
 */
import type { Clock } from "../clock.ts";
import { NO_METRICS, type KubeletMetricsRecorder, type ProbedPod, type ProbeMetricType } from "../stats/kubelet-metrics.ts";
import type { ContainerSpec, PodKey, Probe, ProbeKind } from "../manifest/types.ts";
import type { ProbeResult } from "./probe-result.ts";
import { newProbeResults, type ProbeResults } from "./results.ts";
import { ProbeTracker, type ProbeTrackerSnapshot } from "./tracker.ts";

/** Runs one probe against a container: the Prober in production, a script in tests. */
export interface ProbeRunner {
  probe(probe: Probe, target: { containerId: string; podIP: string; kind: ProbeKind }): Promise<ProbeResult>;
}

/** One running container attempt the loop wants probed. */
export interface ProbeTarget {
  podKey: PodKey;
  containerId: string;
  container: Pick<ContainerSpec, "name" | "startupProbe" | "livenessProbe" | "readinessProbe">;
  /** When the attempt started: initialDelaySeconds counts from here. */
  startedAt: number;
  /** Where a grpc probe, or an httpGet or tcpSocket probe without a host, connects. */
  podIP: string;
  /** The pod, for the prober's metric labels; without it they name the pod by its key. */
  pod?: ProbedPod;
  /** Counters a previous agent checkpointed for this same attempt: they carry on. */
  saved?: ProbeCounters;
}

export type ProbeCounters = Partial<Record<ProbeKind, ProbeTrackerSnapshot>>;

/** What the prober tells its listener (the loop): a probe's event, and that a container's probing moved on. */
export interface ProbeListener {
  event(target: ProbeTarget, type: "Normal" | "Warning", reason: string, message: string): void;
  /** A run settled: a verdict or a counter changed, which the loop reads and checkpoints. */
  probed(target: ProbeTarget): void;
}

export interface ProbeManagerOptions {
  runner: ProbeRunner;
  clock: Clock;
  /** Where verdicts are written; default a new set of caches. */
  results?: ProbeResults;
  /** Each settled run (prober_probe_total, prober_probe_duration_seconds). */
  metrics?: KubeletMetricsRecorder;
}

const LABEL: Record<ProbeKind, string> = { startup: "Startup", liveness: "Liveness", readiness: "Readiness" };
const KINDS: readonly ProbeKind[] = ["startup", "liveness", "readiness"];
const SILENT: ProbeListener = { event: () => {}, probed: () => {} };

interface Worker {
  tracker: ProbeTracker;
  cancel?: () => void;
}

interface ContainerProbes {
  target: ProbeTarget;
  workers: Partial<Record<ProbeKind, Worker>>;
}

export class ProbeManager {
  readonly results: ProbeResults;
  private readonly runner: ProbeRunner;
  private readonly clock: Clock;
  private readonly metrics: KubeletMetricsRecorder;
  private readonly containers = new Map<string, ContainerProbes>();
  private listener: ProbeListener = SILENT;

  constructor(options: ProbeManagerOptions) {
    this.runner = options.runner;
    this.clock = options.clock;
    this.results = options.results ?? newProbeResults();
    this.metrics = options.metrics ?? NO_METRICS;
  }

  /** Who hears the probes' events and progress; one listener (the loop). */
  listen(listener: ProbeListener): void {
    this.listener = listener;
  }

  /**
   * Probes this running attempt, starting its workers the first time (idempotent: a later call only
   * takes the newer pod IP). Each kind's verdict starts at its initial value, or where `saved` was.
   */
  probe(target: ProbeTarget): void {
    const known = this.containers.get(target.containerId);
    if (known) {
      known.target = { ...known.target, podIP: target.podIP };
      return;
    }
    const entry: ContainerProbes = { target, workers: {} };
    for (const kind of KINDS) {
      const probe = target.container[`${kind}Probe`];
      if (!probe) continue;
      const saved = target.saved?.[kind];
      const tracker = saved ? ProbeTracker.restore(kind, probe, saved) : new ProbeTracker(kind, probe);
      entry.workers[kind] = { tracker };
      this.results[kind].set(target.containerId, tracker.verdict);
    }
    this.containers.set(target.containerId, entry);
    for (const kind of KINDS) this.schedule(entry, kind);
  }

  /** Stops probing an attempt (gone, or being stopped) and forgets its verdicts; results in flight are dropped. */
  forget(containerId: string): void {
    const entry = this.containers.get(containerId);
    if (!entry) return;
    for (const worker of Object.values(entry.workers)) worker.cancel?.();
    this.containers.delete(containerId);
    for (const kind of KINDS) this.results[kind].remove(containerId);
  }

  /** The counters of an attempt's probes, for the checkpoint (a restarted agent carries on from them). */
  counters(containerId: string): ProbeCounters {
    const entry = this.containers.get(containerId);
    if (!entry) return {};
    return Object.fromEntries(Object.entries(entry.workers).map(([kind, worker]) => [kind, worker.tracker.snapshot()]));
  }

  /** Stops every worker. Idempotent. */
  stop(): void {
    for (const id of [...this.containers.keys()]) this.forget(id);
  }

  /** Until the startup probe has succeeded, it is the only one that runs. */
  private gated(entry: ContainerProbes, kind: ProbeKind): boolean {
    return kind !== "startup" && entry.workers.startup !== undefined && this.results.startup.get(entry.target.containerId) !== "success";
  }

  /** Arms the worker's timer for its next run, unless it is in flight, on hold or gated. */
  private schedule(entry: ContainerProbes, kind: ProbeKind): void {
    const worker = entry.workers[kind];
    if (!worker || this.gated(entry, kind)) return;
    worker.cancel?.();
    worker.cancel = undefined;
    const at = worker.tracker.nextDueAt(entry.target.startedAt);
    if (at === undefined) return;
    worker.cancel = this.clock.setTimeout(() => this.run(entry, kind, worker), at - this.clock.now());
  }

  private run(entry: ContainerProbes, kind: ProbeKind, worker: Worker): void {
    worker.cancel = undefined;
    if (this.containers.get(entry.target.containerId) !== entry) return;
    const { tracker } = worker;
    const startedAt = this.clock.now();
    tracker.start(startedAt);
    const target = { containerId: entry.target.containerId, podIP: entry.target.podIP, kind };
    this.runner
      .probe(tracker.probe, target)
      .catch((error): ProbeResult => ({ ok: false, message: error instanceof Error ? error.message : String(error) }))
      .then((result) => {
        if (this.containers.get(entry.target.containerId) !== entry || entry.workers[kind] !== worker) return;
        this.record(entry.target, kind, result, (this.clock.now() - startedAt) / 1000);
        this.settle(entry, kind, worker, result);
      });
  }

  private record(target: ProbeTarget, kind: ProbeKind, result: ProbeResult, seconds: number): void {
    const outcome = result.errored ? "unknown" : result.ok ? "successful" : "failed";
    const [namespace = "", name = target.podKey] = target.podKey.split("/");
    this.metrics.probed(LABEL[kind] as ProbeMetricType, outcome, target.container.name, target.pod ?? { namespace, name, uid: "" }, seconds);
  }

  private settle(entry: ContainerProbes, kind: ProbeKind, worker: Worker, result: ProbeResult): void {
    const { target } = entry;
    const { tracker } = worker;
    if (result.errored) {
      // The probe could not run at all (not a failed check): reported, and not counted.
      tracker.discard();
      this.listener.event(target, "Warning", "Unhealthy", `${LABEL[kind]} probe errored and resulted in unknown state: ${result.message}`);
    } else {
      const verdict = tracker.record(result.ok, this.clock.now());
      if (!result.ok) this.listener.event(target, "Warning", "Unhealthy", `${LABEL[kind]} probe failed: ${result.message}`);
      else if (result.warning) this.listener.event(target, "Warning", "ProbeWarning", `${LABEL[kind]} probe warning: ${result.message}`);
      if (verdict && this.results[kind].set(target.containerId, verdict) && kind === "startup" && verdict === "success") {
        // Started: the probes it gated begin now.
        this.schedule(entry, "liveness");
        this.schedule(entry, "readiness");
      }
    }
    this.schedule(entry, kind);
    this.listener.probed(target);
  }
}
