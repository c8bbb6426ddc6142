/**
 * The loop's side of probing, like the kubelet's prober manager: one set of trackers per container
 * attempt. Probes run concurrently and never block a pass: a due probe is started, and its result
 * is applied on the pod's next sync (which the result itself requests). Startup gates the others;
 * startup and liveness failures stop the container (the restart policy decides what follows);
 * readiness only flips `ready`.
 */
import type { Clock } from "../clock.ts";
import type { ProbeDriver } from "../kubelet/kubelet.ts";
import type { ContainerRecord, PodRecord } from "../kubelet/pod-state.ts";
import type { SyncContext } from "../kubelet/sync-context.ts";
import { beginStop } from "../kubelet/termination.ts";
import type { Probe, ProbeKind } from "../manifest/types.ts";
import { ProbeTracker } from "./tracker.ts";
import type { ProbeResult } from "./probe-result.ts";

/** Runs one probe against a container: the Prober in production, a script in tests. */
export interface ProbeRunner {
  probe(probe: Probe, target: { containerId: string; podIP: string; kind: ProbeKind }): Promise<ProbeResult>;
}

interface Finished {
  kind: ProbeKind;
  result: ProbeResult;
  at: number;
}

interface ContainerProbes {
  trackers: Partial<Record<ProbeKind, ProbeTracker>>;
  finished: Finished[];
}

const LABEL: Record<ProbeKind, string> = { startup: "Startup", liveness: "Liveness", readiness: "Readiness" };

export class ProbeManager implements ProbeDriver {
  private readonly containers = new Map<string, ContainerProbes>();

  constructor(
    private readonly runner: ProbeRunner,
    private readonly clock: Clock,
  ) {}

  syncContainer(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): void {
    const id = container.containerId;
    if (!id || container.startedAt === undefined) return;
    const probes = this.entry(id, container);
    for (const done of probes.finished.splice(0)) {
      if (container.state !== "running" || container.stopping) break;
      this.apply(ctx, pod, container, probes, done);
    }
    if (container.state !== "running" || container.stopping) return;
    const now = this.clock.now();
    let nextDue: number | undefined;
    for (const kind of this.activeKinds(container)) {
      const tracker = probes.trackers[kind];
      if (!tracker) continue;
      if (!tracker.inFlight && tracker.due(now, container.startedAt)) this.start(ctx, pod, container, id, kind, tracker);
      const at = tracker.nextDueAt(container.startedAt);
      if (at !== undefined) nextDue = nextDue === undefined ? at : Math.min(nextDue, at);
    }
    if (nextDue !== undefined) ctx.wakeAt(pod, nextDue);
    container.probeCounters = this.snapshot(id);
  }

  forget(containerId: string): void {
    this.containers.delete(containerId);
  }

  /** Counters of a container's trackers, for the store (adoption keeps them). */
  snapshot(containerId: string): Partial<Record<ProbeKind, ReturnType<ProbeTracker["snapshot"]>>> {
    const probes = this.containers.get(containerId);
    if (!probes) return {};
    return Object.fromEntries(Object.entries(probes.trackers).map(([kind, tracker]) => [kind, tracker.snapshot()]));
  }

  private entry(id: string, container: ContainerRecord): ContainerProbes {
    let probes = this.containers.get(id);
    if (!probes) {
      const { startupProbe, livenessProbe, readinessProbe } = container.spec;
      // Counters saved with the record (by a previous agent, for this same attempt) carry on.
      const tracker = (kind: ProbeKind, probe: Probe) => {
        const saved = container.probeCounters?.[kind];
        return saved ? ProbeTracker.restore(kind, probe, saved) : new ProbeTracker(kind, probe);
      };
      probes = {
        trackers: {
          ...(startupProbe && { startup: tracker("startup", startupProbe) }),
          ...(livenessProbe && { liveness: tracker("liveness", livenessProbe) }),
          ...(readinessProbe && { readiness: tracker("readiness", readinessProbe) }),
        },
        finished: [],
      };
      this.containers.set(id, probes);
    }
    return probes;
  }

  /** Until the startup probe has succeeded, it is the only one that runs. */
  private activeKinds(container: ContainerRecord): ProbeKind[] {
    if (container.spec.startupProbe && !container.started) return ["startup"];
    return ["liveness", "readiness"];
  }

  private start(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, id: string, kind: ProbeKind, tracker: ProbeTracker): void {
    const probe = tracker.probe;
    tracker.start(this.clock.now());
    const target = { containerId: id, podIP: pod.sandbox?.ip ?? "127.0.0.1", kind };
    this.runner
      .probe(probe, target)
      .catch((error): ProbeResult => ({ ok: false, message: error instanceof Error ? error.message : String(error) }))
      .then((result) => {
        const probes = this.containers.get(id);
        if (!probes || probes.trackers[kind] !== tracker) return;
        probes.finished.push({ kind, result, at: this.clock.now() });
        ctx.requestSync(pod);
      });
  }

  private apply(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, probes: ContainerProbes, done: Finished): void {
    const tracker = probes.trackers[done.kind];
    if (!tracker) return;
    if (done.result.errored) {
      // The probe could not run at all (not a failed check): reported, and not counted.
      tracker.discard();
      ctx.event(pod, "Warning", "Unhealthy", container, `${LABEL[done.kind]} probe errored and resulted in unknown state: ${done.result.message}`);
      return;
    }
    const verdict = tracker.record(done.result.ok, done.at);
    if (!done.result.ok) {
      ctx.event(pod, "Warning", "Unhealthy", container, `${LABEL[done.kind]} probe failed: ${done.result.message}`);
    } else if (done.result.warning) {
      ctx.event(pod, "Warning", "ProbeWarning", container, `${LABEL[done.kind]} probe warning: ${done.result.message}`);
    }
    const graceMs = (tracker.probe.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds) * 1000;
    switch (done.kind) {
      case "startup":
        if (verdict === "success" && !container.started) {
          container.started = true;
          if (!container.spec.readinessProbe) this.setReady(ctx, pod, container, true);
          // A started sidecar lets the next init container (or the app) start: sync again now.
          ctx.requestSync(pod);
        } else if (verdict === "failure") {
          beginStop(ctx, pod, container, "startup", graceMs);
        }
        break;
      case "liveness":
        if (verdict === "failure") beginStop(ctx, pod, container, "liveness", graceMs);
        break;
      case "readiness":
        if (verdict) this.setReady(ctx, pod, container, verdict === "success");
        break;
    }
  }

  private setReady(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, ready: boolean): void {
    if (container.ready === ready) return;
    container.ready = ready;
    if (ready) ctx.event(pod, "Normal", "Ready", container, `Container ${container.name} is ready`);
    else ctx.event(pod, "Warning", "NotReady", container, `Container ${container.name} is not ready`);
  }
}
