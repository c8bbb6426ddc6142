import { Kubelet, type KubeletOptions } from "../src/kubelet/kubelet.ts";
import type { KubeEvent } from "../src/v1/kube-event.ts";
import { restartCountOf, type ContainerRecord } from "../src/kubelet/pod-state.ts";
import { backoffSettings } from "../src/kubelet/backoff.ts";
import { FakeClock, advance } from "./fake-clock.ts";
import { FakeRuntime } from "./fake-runtime.ts";
import { ProbeManager, type ProbeRunner } from "../src/prober/probe-manager.ts";
import type { PodLifecycleEventGenerator } from "../src/pleg/pleg.ts";

/**
 * Lets everything a timer set off finish: promise chains (a preStop hook's completion) need a turn
 * of the event loop before the pod worker they wake is running.
 */
async function settle(kubelet: Kubelet): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await kubelet.idle();
  }
}

/** A kubelet on a fake runtime and a fake clock, recording every event with its time offset. */
export function harness(
  options: Partial<KubeletOptions> & {
    baseSeconds?: number;
    capSeconds?: number;
    /** Runs probes through a ProbeManager on the harness clock (a script, or a real Prober). */
    probeRunner?: (runtime: FakeRuntime, clock: FakeClock) => ProbeRunner;
    /** The PLEG the loop hears the runtime through; default the loop's own (the event stream alone). */
    plegFor?: (runtime: FakeRuntime, clock: FakeClock) => PodLifecycleEventGenerator;
  } = {},
) {
  const clock = new FakeClock();
  const start = clock.now();
  const runtime = new FakeRuntime(clock);
  const kubelet = new Kubelet({
    runtime,
    clock,
    ...(options.probeRunner && { probes: new ProbeManager({ runner: options.probeRunner(runtime, clock), clock, ...(options.metrics && { metrics: options.metrics }) }) }),
    ...(options.plegFor && { pleg: options.plegFor(runtime, clock) }),
    backoff: backoffSettings({ baseSeconds: options.baseSeconds ?? 10, capSeconds: options.capSeconds ?? 300 }),
    ...options,
  });
  const events: KubeEvent[] = [];
  kubelet.recorder.subscribe((event) => events.push(event));
  kubelet.start();
  return {
    clock,
    runtime,
    kubelet,
    events,
    /** Steps the clock, letting each timer's consequences run at its own time. */
    advance: (seconds: number) => advance(clock, seconds * 1000, () => settle(kubelet)),
    /** "12.0s Warning BackOff crash" lines, like `run` prints, for readable assertions. */
    lines: (filter?: (e: KubeEvent) => boolean) =>
      events
        .filter(filter ?? (() => true))
        .map((e) => `${((e.at - start) / 1000).toFixed(1)}s ${e.reason} ${e.container}${e.reason === "Exited" ? ` ${e.message.replace(`Container ${e.container} `, "")}` : ""}`.trimEnd()),
    pod: (key: string) => kubelet.pods.get(key),
  };
}

/** A container record with the restart count it derives, for assertions that read it beside the record's own fields. */
export function counted<T extends Pick<ContainerRecord, "attempts">>(container: T): T & { restartCount: number } {
  return { ...container, restartCount: restartCountOf(container) };
}
