/**
 * Issue 11, "adoption is a gate, not a one-shot": until adoption has succeeded no desired set
 * reaches the loop, a failed adoption is retried with a back-off, and a scan that arrives during
 * adoption waits for it. Wired as `run` wires it: ManifestWatcher scans -> gate -> Kubelet.
 */
import { describe, expect, test } from "bun:test";
import { AdoptionGate, adoptFromRuntime, type DesiredPods } from "../../src/kubelet/adoption/adoption-gate.ts";
import { agent, world } from "../adoption-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

/** A second agent on the world's runtime and checkpoint, behind a gate, as `run` starts one. */
function gated(w: ReturnType<typeof world>) {
  const next = agent(w.clock, w.runtime, w.store);
  const logs: string[] = [];
  const gate = new AdoptionGate({
    adopt: (want) => adoptFromRuntime({ kubelet: next.kubelet, runtime: w.runtime, store: w.store, clock: w.clock, node: "lab" }, want),
    sync: (want) => void next.kubelet.sync(want),
    clock: w.clock,
    log: (line) => logs.push(line),
  });
  return { ...next, gate, logs };
}

/** Makes the runtime's listContainers fail the next `times` calls, as an engine that is briefly away. */
function failListing(w: ReturnType<typeof world>, times: number): void {
  const real = w.runtime.listContainers.bind(w.runtime);
  let left = times;
  w.runtime.listContainers = async () => {
    if (left-- > 0) throw new Error("connect ECONNREFUSED /var/run/docker.sock");
    return real();
  };
}

describe("adoption gate", () => {
  test("a failed adoption is retried with a back-off; scans meanwhile start nothing, and nothing runs twice", async () => {
    const w = world();
    const first = agent(w.clock, w.runtime, w.store);
    const web = pod({ name: "web", containers: [container("web")] });
    await first.kubelet.sync(desired(web));
    first.kubelet.stop(); // kill -9: web keeps running
    failListing(w, 2);
    const second = gated(w);
    second.gate.offer(desired(web));
    await second.advance(0.5);
    second.gate.offer(desired(web)); // a rescan while the retry waits
    await second.advance(0.4);
    expect(second.gate.open).toBe(false);
    expect(w.runtime.startsOf("web")).toBe(1);
    expect(second.kubelet.pods.size).toBe(0);
    expect(second.logs).toEqual([
      "adoption failed (attempt 1): connect ECONNREFUSED /var/run/docker.sock; no pod is synced until it succeeds, retrying in 1s",
    ]);
    await second.advance(0.2); // 1s: the second attempt fails too, the next waits 2s
    expect(second.logs.at(-1)).toContain("adoption failed (attempt 2)");
    expect(second.logs.at(-1)).toContain("retrying in 2s");
    await second.advance(1.8);
    expect(second.gate.open).toBe(false);
    await second.advance(0.2); // 3s: the third attempt works
    expect(second.gate.open).toBe(true);
    expect(second.logs.at(-1)).toBe("adoption succeeded after 2 failed attempts");
    await second.advance(30);
    expect(w.runtime.startsOf("web")).toBe(1);
    expect(second.kubelet.pods.get(web.key)!.app[0]!).toMatchObject({ state: "running", containerId: w.runtime.running("web")!.id });
    expect(second.events.map((e) => e.reason)).toEqual(["Adopted"]);
  });

  test("a scan that arrives during adoption waits for it, and the newest desired set is the one synced", async () => {
    const w = world();
    const real = w.runtime.listContainers.bind(w.runtime);
    let release!: () => void;
    const listed = new Promise<void>((resolve) => (release = resolve));
    w.runtime.listContainers = async () => {
      await listed;
      return real();
    };
    const second = gated(w);
    const v1 = pod({ name: "web", revision: 1 });
    const v2 = pod({ name: "web", revision: 2 });
    second.gate.offer(desired(v1));
    second.gate.offer(desired(v2));
    await second.advance(1);
    expect(w.runtime.calls).toEqual([]);
    release();
    await second.advance(1);
    expect(second.gate.open).toBe(true);
    expect(w.runtime.calls).toEqual(["sandbox web-lab", "start web attempt=0"]);
    expect(second.kubelet.pods.get(v2.key)!.spec.configHash).toBe(v2.configHash);
    const later: DesiredPods = desired();
    second.gate.offer(later); // open: straight to the loop
    await second.advance(40);
    expect(second.kubelet.pods.size).toBe(0);
  });

  test("stopped while adoption is retrying: no more attempts and no sync", async () => {
    const w = world();
    failListing(w, 1);
    const second = gated(w);
    second.gate.offer(desired(pod({ name: "web" })));
    await second.advance(0.1);
    await second.gate.stop();
    await second.advance(60);
    expect(second.logs).toHaveLength(1);
    expect(w.runtime.calls).toEqual([]);
  });
});
