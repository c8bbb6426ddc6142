/**
 * The PLEG (pleg.ts) over a runtime that reports its containers' starts and exits as they happen
 * (the process runtime's marker watch, docker's events stream), like the kubelet's evented PLEG: the
 * streams are the mechanism, the periodic relist only the backstop. A runtime with a cheap relist
 * of its own (`Runtime.relist`: the process runtime re-reads its markers) is relisted often; any
 * other is listed (relist-diff.ts), less often. Health is the age of the last successful relist.
 */
import type { Clock } from "../clock.ts";
import { NO_METRICS, type KubeletMetricsRecorder } from "../stats/kubelet-metrics.ts";
import type { PodKey } from "../manifest/types.ts";
import type { Runtime, RuntimeEvent } from "../runtime/runtime.ts";
import { goDuration } from "../printers/go-duration.ts";
import { RELIST_THRESHOLD_MS, type PlegHealth, type PodLifecycleEvent, type PodLifecycleEventGenerator, type TrackedKind } from "./pleg.ts";
import { PodIndex } from "./pod-index.ts";
import { RelistDiff } from "./relist-diff.ts";

/** How often a runtime's own relist runs (cheap: nothing is read while nothing changed). */
export const OWN_RELIST_PERIOD_MS = 5_000;
/** How often a runtime without one is listed: the backstop for a lost event, as the loop's full pass was. */
export const LISTING_RELIST_PERIOD_MS = 60_000;

export interface EventedPlegOptions {
  runtime: Pick<Runtime, "watch" | "listContainers" | "listPodSandboxes" | "relist">;
  clock: Clock;
  /** Default: OWN_RELIST_PERIOD_MS for a runtime with a relist of its own, else LISTING_RELIST_PERIOD_MS. */
  relistPeriodMs?: number;
  /** Default RELIST_THRESHOLD_MS, the kubelet's. */
  thresholdMs?: number;
  log?: (message: string) => void;
  /** Each relist's duration and the interval between relists (kubelet_pleg_relist_*). */
  metrics?: KubeletMetricsRecorder;
}

export class EventedPleg implements PodLifecycleEventGenerator {
  private readonly runtime: EventedPlegOptions["runtime"];
  private readonly clock: Clock;
  private readonly relistPeriodMs: number;
  private readonly thresholdMs: number;
  private readonly log: (message: string) => void;
  private readonly metrics: KubeletMetricsRecorder;
  private lastRelistStartedAt?: number;
  private readonly index = new PodIndex();
  private readonly diff = new RelistDiff();
  private readonly listeners = new Set<(event: PodLifecycleEvent) => void>();
  private unwatchRuntime?: () => void;
  private cancelRelist?: () => void;
  private relisting = false;
  private lastRelistAt: number;
  /** When the figure last turned healthy (the start, or the relist that ended an unhealthy spell). */
  private healthySince: number;
  private lastRelistError?: string;
  private started = false;

  constructor(options: EventedPlegOptions) {
    this.runtime = options.runtime;
    this.clock = options.clock;
    this.relistPeriodMs = options.relistPeriodMs ?? (options.runtime.relist ? OWN_RELIST_PERIOD_MS : LISTING_RELIST_PERIOD_MS);
    this.thresholdMs = options.thresholdMs ?? RELIST_THRESHOLD_MS;
    this.log = options.log ?? (() => {});
    this.metrics = options.metrics ?? NO_METRICS;
    this.lastRelistAt = this.clock.now();
    this.healthySince = this.lastRelistAt;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.lastRelistAt = this.clock.now();
    this.healthySince = this.lastRelistAt;
    this.listen();
    this.armRelist();
  }

  stop(): void {
    this.started = false;
    this.cancelRelist?.();
    this.cancelRelist = undefined;
    this.unwatchRuntime?.();
    this.unwatchRuntime = undefined;
  }

  watch(listener: (event: PodLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    this.listen();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && !this.started) {
        this.unwatchRuntime?.();
        this.unwatchRuntime = undefined;
      }
    };
  }

  track(id: string, podKey: PodKey, kind: TrackedKind): boolean {
    return this.index.track(id, podKey, kind);
  }

  untrack(id: string): void {
    this.index.untrack(id);
    this.diff.forget(id);
  }

  async relist(): Promise<void> {
    if (this.relisting) return;
    this.relisting = true;
    const startedAt = this.clock.now();
    const interval = this.lastRelistStartedAt === undefined ? undefined : (startedAt - this.lastRelistStartedAt) / 1000;
    this.lastRelistStartedAt = startedAt;
    try {
      if (this.runtime.relist) await this.runtime.relist();
      else {
        const [containers, sandboxes] = await Promise.all([this.runtime.listContainers(), this.runtime.listPodSandboxes()]);
        for (const event of this.diff.relisted(containers, sandboxes)) this.onRuntimeEvent(event);
      }
      const now = this.clock.now();
      if (now - this.lastRelistAt > this.thresholdMs) this.healthySince = now;
      this.lastRelistAt = now;
      this.lastRelistError = undefined;
      this.metrics.plegRelist((now - startedAt) / 1000, interval);
    } catch (error) {
      // Said once per error: a runtime away for minutes fails every relist the same way.
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.lastRelistError) this.log(`relisting the runtime failed: ${message}`);
      this.lastRelistError = message;
    } finally {
      this.relisting = false;
    }
  }

  healthy(): PlegHealth {
    const elapsed = this.clock.now() - this.lastRelistAt;
    if (elapsed <= this.thresholdMs) return { healthy: true, since: this.healthySince };
    // Whole seconds, as the kubelet's figure reads in practice: `3m0s ago`, not a nanosecond count.
    const seen = goDuration(Math.floor(elapsed / 1000) * 1000);
    return { healthy: false, message: `pleg was last seen active ${seen} ago; threshold is ${goDuration(this.thresholdMs)}`, since: this.lastRelistAt + this.thresholdMs };
  }

  private listen(): void {
    this.unwatchRuntime ??= this.runtime.watch((event) => this.onRuntimeEvent(event));
  }

  private armRelist(): void {
    if (!this.started) return;
    this.cancelRelist = this.clock.setTimeout(() => {
      this.cancelRelist = undefined;
      void this.relist().finally(() => this.armRelist());
    }, this.relistPeriodMs);
  }

  private onRuntimeEvent(event: RuntimeEvent): void {
    if (event.type === "health") return this.emit({ type: "RuntimeHealth", healthy: event.healthy, message: event.message });
    const exited = event.type === "exited";
    this.diff.heard(event.containerId, !exited);
    const owner = this.index.route(event.containerId, exited);
    if (!owner) return;
    this.emit({ type: exited ? "ContainerDied" : "ContainerStarted", podKey: owner.podKey, containerId: event.containerId, sandbox: owner.kind === "sandbox" });
  }

  private emit(event: PodLifecycleEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        // One listener's failure must not keep the others from hearing of the exit.
        this.log(`a PLEG listener failed on ${event.type}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
