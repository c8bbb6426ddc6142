/**
 * What the probes' verdicts ask of a running container in this pass, the probe part of the
 * kubelet's computePodActions: the prober only caches verdicts (prober/results.ts); the loop acts.
 * A startup or liveness failure stops the container (the restart policy decides what follows), a
 * startup success marks it started, readiness is its `ready`.
 */
import type { Probe } from "../manifest/types.ts";
import type { ProbeCounters, ProbeListener, ProbeTarget } from "../prober/probe-manager.ts";
import type { ProbeResults } from "../prober/results.ts";
import type { ContainerRecord, PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";
import { beginStop } from "./termination.ts";

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

export function applyProbeVerdicts(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, results: ProbeResults): void {
  const id = container.containerId;
  if (!id || container.state !== "running" || container.stopping) return;
  const { startupProbe, livenessProbe, readinessProbe } = container.spec;
  const graceMs = (probe: Probe) => (probe.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds) * 1000;
  if (startupProbe && !container.started) {
    const verdict = results.startup.get(id);
    if (verdict === "failure") return beginStop(ctx, pod, container, "startup", graceMs(startupProbe));
    if (verdict !== "success") return;
    container.started = true;
    // A started sidecar lets the next init container (or the app) start: sync again now.
    ctx.requestSync(pod);
  }
  if (livenessProbe && results.liveness.get(id) === "failure") return beginStop(ctx, pod, container, "liveness", graceMs(livenessProbe));
  // A verdict not known yet (the prober has not seen the attempt) leaves `ready` as the start set it.
  const readiness = readinessProbe ? results.readiness.get(id) : "success";
  if (readiness !== undefined && readiness !== "unknown") setReady(ctx, pod, container, readiness === "success");
}

function setReady(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, ready: boolean): void {
  if (container.ready === ready) return;
  container.ready = ready;
  if (ready) ctx.event(pod, "Normal", "Ready", container, `Container ${container.name} is ready`);
  else ctx.event(pod, "Warning", "NotReady", container, `Container ${container.name} is not ready`);
}
