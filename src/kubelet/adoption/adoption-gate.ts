/**
 * Adoption as a gate, the kubelet's "sources ready": no desired set reaches the loop before the
 * previous agent's pods have been taken over, because a sync before that starts again what is
 * already running. Scans that arrive meanwhile are held (only the newest matters: `sync` is
 * level-triggered), and a failed adoption (the runtime briefly unreachable, a store read that
 * failed) is retried with a back-off until it succeeds, never skipped.
 */
import { cappedDoubling } from "../../capped-doubling.ts";
import type { Clock } from "../../clock.ts";
import type { PodKey, PodSpec } from "../../manifest/types.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import type { BackoffEntry } from "../backoff.ts";
import { planAdoption } from "./adoption.ts";
import type { Kubelet } from "../kubelet.ts";
import type { PodRecord } from "../pod-state.ts";

export type DesiredPods = Map<PodKey, PodSpec>;

export interface AdoptionGateOptions {
  /** Takes over from the previous agent using the newest desired set; rejects to be retried. */
  adopt: (desired: DesiredPods) => Promise<void>;
  /** Receives the newest held set once adoption succeeded, then every set offered after. */
  sync: (desired: DesiredPods) => void;
  clock: Clock;
  log: (message: string) => void;
  /** Retry back-off after a failed adoption: first wait, doubling up to the cap. Default 1s to 30s. */
  retry?: { baseMs: number; capMs: number };
}

const DEFAULT_RETRY = { baseMs: 1000, capMs: 30_000 };

export class AdoptionGate {
  private stage: "waiting" | "adopting" | "retrying" | "open" | "stopped" = "waiting";
  private held?: DesiredPods;
  private failures = 0;
  private cancelRetry?: () => void;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly options: AdoptionGateOptions) {}

  /** True once adoption has succeeded and desired sets go straight to `sync`. */
  get open(): boolean {
    return this.stage === "open";
  }

  /** A scan's desired set: synced when the gate is open, else held (the first one starts adoption). */
  offer(desired: DesiredPods): void {
    if (this.stage === "open") return this.options.sync(desired);
    if (this.stage === "stopped") return;
    this.held = desired;
    if (this.stage === "waiting") this.attempt();
  }

  /** No more attempts or syncs; resolves once an adoption in flight has finished. Idempotent. */
  stop(): Promise<void> {
    this.stage = "stopped";
    this.cancelRetry?.();
    this.cancelRetry = undefined;
    return this.inFlight;
  }

  private attempt(): void {
    this.stage = "adopting";
    this.inFlight = this.run();
  }

  private async run(): Promise<void> {
    const desired = this.held!;
    try {
      await this.options.adopt(desired);
    } catch (error) {
      if (this.stage === "stopped") return;
      this.failures++;
      const { baseMs, capMs } = this.options.retry ?? DEFAULT_RETRY;
      const delayMs = cappedDoubling(baseMs, capMs, this.failures - 1);
      this.options.log(
        `adoption failed (attempt ${this.failures}): ${error instanceof Error ? error.message : String(error)}; no pod is synced until it succeeds, retrying in ${delayMs / 1000}s`,
      );
      this.stage = "retrying";
      this.cancelRetry = this.options.clock.setTimeout(() => this.attempt(), delayMs);
      return;
    }
    if (this.stage === "stopped") return;
    if (this.failures > 0) this.options.log(`adoption succeeded after ${this.failures} failed attempt${this.failures === 1 ? "" : "s"}`);
    this.stage = "open";
    const newest = this.held!;
    this.held = undefined;
    this.options.sync(newest);
  }
}

export interface RuntimeAdoption {
  kubelet: Pick<Kubelet, "adopt">;
  runtime: Pick<Runtime, "listContainers" | "listPodSandboxes">;
  /** The checkpoint: live pod records and back-off entries as the previous agent saved them. */
  store: { loadState(): { pods: PodRecord[]; backoff: BackoffEntry[] } };
  clock: Clock;
  /** The agent's --node ("" when unset). */
  node: string;
  /** The identity of the agent's database: what does not carry it is neither adopted nor removed. */
  database?: string;
}

/** One adoption: the checkpoint and the runtime's labelled containers, planned and applied. */
export async function adoptFromRuntime(source: RuntimeAdoption, desired: DesiredPods): Promise<void> {
  const state = source.store.loadState();
  const [containers, sandboxes] = await Promise.all([source.runtime.listContainers(), source.runtime.listPodSandboxes()]);
  const plan = planAdoption({ records: state.pods, containers, sandboxes, desired, now: source.clock.now(), node: source.node, database: source.database });
  await source.kubelet.adopt(plan, state.backoff);
}
