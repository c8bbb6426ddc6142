/**
 * The probe results cache, like the kubelet's prober/results Manager: the prober writes each
 * container's verdict, the sync loop reads it and decides (a liveness failure is a kill, a startup
 * success lets the next init container start, readiness is the container's `ready`). One cache per
 * probe kind; entries are per container attempt, so a restarted container starts from its kind's
 * initial verdict.
 */
import type { ProbeKind } from "../manifest/types.ts";
import type { ProbeVerdict } from "./tracker.ts";

export class ResultsCache {
  private readonly verdicts = new Map<string, ProbeVerdict>();

  /** The container's verdict; undefined while it is not probed (no such probe, or not yet seen). */
  get(containerId: string): ProbeVerdict | undefined {
    return this.verdicts.get(containerId);
  }

  /** True when the verdict changed. */
  set(containerId: string, verdict: ProbeVerdict): boolean {
    if (this.verdicts.get(containerId) === verdict) return false;
    this.verdicts.set(containerId, verdict);
    return true;
  }

  remove(containerId: string): void {
    this.verdicts.delete(containerId);
  }
}

/** The three caches the loop reads, by probe kind. */
export type ProbeResults = Readonly<Record<ProbeKind, ResultsCache>>;

export function newProbeResults(): ProbeResults {
  return { startup: new ResultsCache(), liveness: new ResultsCache(), readiness: new ResultsCache() };
}
