/**
 * Agent restarts on a fake runtime and a fake clock: a runtime and a checkpoint that outlive the
 * agents started on them, and `restart()`, which does what `run` does after `kill -9`.
 */
import { Kubelet, type PodStateSink } from "../src/kubelet/kubelet.ts";
import { adoptFromRuntime } from "../src/kubelet/adoption/adoption-gate.ts";
import { backoffSettings, type BackoffEntry } from "../src/kubelet/backoff.ts";
import type { KubeEvent } from "../src/v1/kube-event.ts";
import type { PodRecord } from "../src/kubelet/pod-state.ts";
import type { PodSpec } from "../src/manifest/types.ts";
import { ProbeManager, type ProbeRunner } from "../src/prober/probe-manager.ts";
import { advance, FakeClock } from "./fake-clock.ts";
import { FakeRuntime } from "./fake-runtime.ts";

/** What a store would hold: the last saved copy of each pod, as JSON survives a crash. */
export class CheckpointSink implements PodStateSink {
  readonly records = new Map<string, string>();
  backoff: BackoffEntry[] = [];
  /** Set when the agent is "killed": nothing it does afterwards reaches the checkpoint. */
  frozen = false;
  savePod(pod: PodRecord, _object: unknown, _events: KubeEvent[], backoff: BackoffEntry[]): void {
    if (this.frozen) return;
    this.records.set(pod.spec.key, JSON.stringify(pod));
    this.backoff = [...this.backoff.filter((b) => !backoff.some((n) => n.key === b.key)), ...backoff];
  }
  deletePod(pod: PodRecord): void {
    if (this.frozen) return;
    this.records.delete(pod.spec.key);
  }
  load(): PodRecord[] {
    return [...this.records.values()].map((json) => JSON.parse(json) as PodRecord);
  }
  loadState(): { pods: PodRecord[]; backoff: BackoffEntry[] } {
    return { pods: this.load(), backoff: this.backoff };
  }
}

export function agent(clock: FakeClock, runtime: FakeRuntime, store: CheckpointSink, prober?: ProbeRunner) {
  const probes = prober && new ProbeManager({ runner: prober, clock });
  const kubelet = new Kubelet({ runtime, clock, store, probes, backoff: backoffSettings({ baseSeconds: 10, capSeconds: 300 }) });
  const events: KubeEvent[] = [];
  kubelet.recorder.subscribe((e) => events.push(e));
  kubelet.start();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((r) => setImmediate(r));
      await kubelet.idle();
    }
  };
  return { kubelet, events, advance: (s: number) => advance(clock, s * 1000, settle) };
}

/** A runtime and a checkpoint that outlive the agents started on them, on one fake clock. */
export function world() {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const store = new CheckpointSink();
  return { clock, runtime, store };
}

/**
 * `kill -9` the moment the agent reports `Started` for `container` (the `nth` time, from 1): the
 * pass that started it never checkpoints, and the agent stops listening. The container keeps running.
 */
export function killOnStarted(first: ReturnType<typeof agent>, store: CheckpointSink, container: string, nth = 1): void {
  let seen = 0;
  first.kubelet.recorder.subscribe((event) => {
    if (event.reason !== "Started" || event.container !== container || ++seen !== nth) return;
    store.frozen = true;
    first.kubelet.stop();
  });
}

/** Simulates `kill -9`: the old loop stops listening; its containers keep running in the runtime. */
export async function restart(clock: FakeClock, runtime: FakeRuntime, store: CheckpointSink, old: Kubelet, want: Map<string, PodSpec>, prober?: ProbeRunner) {
  old.stop();
  store.frozen = false;
  const next = agent(clock, runtime, store, prober);
  await adoptFromRuntime({ kubelet: next.kubelet, runtime, store, clock, node: "lab" }, want);
  await next.kubelet.sync(want);
  return next;
}
