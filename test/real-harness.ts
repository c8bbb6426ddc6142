import { realClock } from "../src/clock.ts";
import { backoffSettings } from "../src/kubelet/backoff.ts";
import type { KubeEvent } from "../src/v1/kube-event.ts";
import { Kubelet, type KubeletOptions } from "../src/kubelet/kubelet.ts";
import type { Runtime } from "../src/runtime/runtime.ts";

/**
 * A kubelet on a real runtime and the real clock. Tests wait for events as they arrive (no polling
 * loop, no fixed sleeps): `nextEvent` resolves when a matching event is emitted.
 */
export function realHarness(runtime: Runtime, options: Partial<KubeletOptions> & { baseSeconds?: number; capSeconds?: number } = {}) {
  const kubelet = new Kubelet({
    runtime,
    clock: realClock,
    backoff: backoffSettings({ baseSeconds: options.baseSeconds ?? 0.4, capSeconds: options.capSeconds ?? 1.6 }),
    ...options,
  });
  const started = Date.now();
  const events: KubeEvent[] = [];
  const waiters: Array<{ match: (e: KubeEvent) => boolean; resolve: (e: KubeEvent) => void }> = [];
  kubelet.recorder.subscribe((event) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  });
  kubelet.start();
  return {
    kubelet,
    events,
    started,
    /** The first event, past or future, matching `match`; rejects after `ms`. */
    event(match: (e: KubeEvent) => boolean, ms = 10_000, what = "event"): Promise<KubeEvent> {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve: (e: KubeEvent) => (clearTimeout(timer), resolve(e)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`${what} not seen within ${ms}ms; saw:\n${events.map((e) => `${e.reason} ${e.container} ${e.message}`).join("\n")}`));
        }, ms);
        waiters.push(waiter);
      });
    },
    /** Waits until `count` events match. */
    async count(match: (e: KubeEvent) => boolean, count: number, ms = 10_000): Promise<KubeEvent[]> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.filter(match);
        if (found.length >= count) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`only ${found.length} of ${count} events within ${ms}ms`);
        await this.event((e) => match(e) && !found.includes(e), left).catch(() => undefined);
      }
    },
    async close(): Promise<void> {
      await kubelet.shutdown();
      kubelet.stop();
      await runtime.close();
    },
  };
}
