/**
 * The PLEG (issue 22): one seam for the runtime's event streams and the relist backstop, with a
 * health figure. A relist finds what a stream lost; relists that stop succeeding turn the node's
 * Ready condition False in the kubelet's words after three minutes, and it clears once they resume.
 */
import { describe, expect, test } from "bun:test";
import { apiRoutes } from "../../src/api/routes.ts";
import { EventedPleg, LISTING_RELIST_PERIOD_MS } from "../../src/pleg/evented-pleg.ts";
import { RELIST_THRESHOLD_MS } from "../../src/pleg/pleg.ts";
import { call } from "../api-objects-fixtures.ts";
import { apiHarness } from "../api-watch-fixtures.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeRuntime } from "../fake-runtime.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

describe("the relist backstop", () => {
  test("an exit the runtime's event stream lost is found by the next relist, and the pod syncs on it", async () => {
    let pleg!: EventedPleg;
    const h = harness({ plegFor: (runtime, clock) => (pleg = new EventedPleg({ runtime, clock })) });
    pleg.start();
    const web = pod({ name: "web", containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    // The process ends and nothing says so: a dropped line of the engine's event stream.
    const running = h.runtime.running("web")!;
    Object.assign(running, { state: "exited", exitCode: 3, finishedAt: h.clock.now() });
    await h.advance(LISTING_RELIST_PERIOD_MS / 1000 - 2);
    expect(h.pod(web.key)!.app[0]!.state).toBe("running");
    await h.advance(2);
    expect(h.lines((e) => e.reason === "Exited")).toEqual([`${(LISTING_RELIST_PERIOD_MS / 1000).toFixed(1)}s Exited web exited with code 3 (Error)`]);
    pleg.stop();
    h.kubelet.stop();
  });

  test("what the stream did report is not reported again by a relist", async () => {
    let pleg!: EventedPleg;
    const h = harness({ plegFor: (runtime, clock) => (pleg = new EventedPleg({ runtime, clock })) });
    pleg.start();
    const heard: string[] = [];
    pleg.watch((event) => heard.push(event.type));
    const web = pod({ name: "web", restartPolicy: "Never", containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    h.runtime.finish(h.runtime.running("web")!.id, 0);
    await h.advance((3 * LISTING_RELIST_PERIOD_MS) / 1000);
    expect(heard.filter((type) => type === "ContainerDied")).toHaveLength(1);
    pleg.stop();
    h.kubelet.stop();
  });
});

describe("PLEG health and the node's Ready condition", () => {
  test("relists that stop succeeding turn Ready False with the kubelet's message after 3 minutes; it clears when they resume", async () => {
    using dir = tempDir();
    const a = apiHarness(dir.path);
    const clock = new FakeClock(a.clock.now());
    const runtime = new FakeRuntime(clock);
    const pleg = new EventedPleg({ runtime, clock });
    const api = { ...a.api, clock, runtime: runtime as never, plegHealth: () => pleg.healthy() };
    const ready = async () => (await call(apiRoutes, "GET", "/api/v1/nodes/lab", api)).body.status.conditions.find((c: { type: string }) => c.type === "Ready");
    const settle = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    pleg.start();
    clock.step(LISTING_RELIST_PERIOD_MS);
    await settle();
    expect(await ready()).toMatchObject({ status: "True", reason: "KubeletReady" });
    const lastGood = clock.now();
    let failing = true;
    const list = runtime.listContainers.bind(runtime);
    runtime.listContainers = async () => {
      if (failing) throw new Error("Cannot connect to the Docker daemon at unix:///var/run/docker.sock");
      return list();
    };
    for (let step = 0; step < 3; step++) {
      clock.step(LISTING_RELIST_PERIOD_MS);
      await settle();
    }
    // Exactly the threshold: still healthy (the kubelet's test is "older than").
    expect(clock.now() - lastGood).toBe(RELIST_THRESHOLD_MS);
    expect(pleg.healthy().healthy).toBe(true);
    clock.step(500);
    expect(pleg.healthy()).toMatchObject({ healthy: false, message: "pleg was last seen active 3m0s ago; threshold is 3m0s" });
    expect(await ready()).toMatchObject({
      status: "False",
      reason: "KubeletNotReady",
      message: "PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s",
      lastTransitionTime: new Date(lastGood + RELIST_THRESHOLD_MS).toISOString().replace(".000Z", "Z"),
    });
    failing = false;
    clock.step(LISTING_RELIST_PERIOD_MS - 500);
    await settle();
    expect(pleg.healthy().healthy).toBe(true);
    expect(await ready()).toMatchObject({ status: "True", reason: "KubeletReady", lastTransitionTime: new Date(clock.now()).toISOString().replace(".000Z", "Z") });
    pleg.stop();
    a.close();
  });
});
