/**
 * The prober as the loop drives it, and the probe part of the kubelet's computePodActions carried
 * out: the prober only caches verdicts (prober/results.ts); the plan decides on them
 * (compute-pod-actions.ts: a startup or liveness failure stops the container, a startup success
 * marks it started, readiness is its `ready`) and the loop acts here.
 */
import type { ProbeCounters, ProbeListener, ProbeTarget } from "../prober/probe-manager.ts";
import type { ProbeResults } from "../prober/results.ts";
import type { ContainerRecord, PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";
import { beginStop } from "./lifecycle/termination.ts";
import type { ProbeOutcome, ProbeVerdicts } from "./compute-pod-actions.ts";

/**
 * The prober as the loop uses it (prober/probe-manager.ts): it probes the attempts the loop runs
 * and caches verdicts, which the loop reads and acts on (below); it decides nothing.
 */
export interface ProbeDriver {
  readonly results: ProbeResults;
  /** Probes this running attempt (idempotent). */
  probe(target: ProbeTarget): void;
  /** Stops probing an attempt that is gone or stopping, dropping its verdicts and any run in flight. */
  forget(containerId: string): void;
  /** The attempt's probe counters, checkpointed with its record. */
  counters(containerId: string): ProbeCounters;
  listen(listener: ProbeListener): void;
  stop(): void;
}

/** The verdicts the prober holds on a container's current attempt, as the plan reads them. */
export function verdictsOf(results: ProbeResults, containerId: string): ProbeVerdicts {
  const verdicts: ProbeVerdicts = {};
  for (const kind of ["startup", "liveness", "readiness"] as const) {
    const verdict = results[kind].get(containerId);
    if (verdict !== undefined) verdicts[kind] = verdict;
  }
  return verdicts;
}

/** Carries out what the verdicts asked of a running attempt (compute-pod-actions.ts probeOutcome). */
export function applyProbeOutcome(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, outcome: ProbeOutcome): void {
  if (container.state !== "running" || container.stopping) return;
  if (outcome.started) {
    container.started = true;
    // A started sidecar lets the next init container (or the app) start: sync again now.
    ctx.requestSync(pod);
  }
  if (outcome.kill) return beginStop(ctx, pod, container, outcome.kill.reason, outcome.kill.graceMs, outcome.kill.message);
  if (outcome.ready !== undefined) setReady(ctx, pod, container, outcome.ready);
}

function setReady(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, ready: boolean): void {
  if (container.ready === ready) return;
  container.ready = ready;
  if (ready) ctx.event(pod, "Normal", "Ready", container, `Container ${container.name} is ready`);
  else ctx.event(pod, "Warning", "NotReady", container, `Container ${container.name} is not ready`);
}
