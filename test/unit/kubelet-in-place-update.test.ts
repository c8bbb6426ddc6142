/**
 * A pod updated in place (same uid, new spec: an API pod's `kubectl set image`) restarts only the
 * container whose definition changed, as the kubelet does through its container hash; a label
 * change restarts nothing; an edited file (new uid) is still a new pod.
 */
import { describe, expect, test } from "bun:test";
import type { PodSpec } from "../../src/manifest/types.ts";
import { agent, restart, world } from "../adoption-harness.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

/** The same pod object with a new spec, as the API source hands it over after an update. */
function updated(base: PodSpec, change: (spec: PodSpec) => PodSpec): PodSpec {
  return { ...change(base), uid: base.uid, configHash: `${base.configHash}-updated` };
}

function twoContainers(restartPolicy: PodSpec["restartPolicy"] = "Always"): PodSpec {
  return pod({ name: "web", restartPolicy, grace: 5, containers: [container("web"), container("side")] });
}

const withImage = (spec: PodSpec, name: string, image: string): PodSpec => ({
  ...spec,
  containers: spec.containers.map((c) => (c.name === name ? { ...c, image } : c)),
});

describe("a pod updated in place", () => {
  test("a changed image kills and restarts that container only, with the kubelet's Killing message and restart count +1", async () => {
    const h = harness();
    const base = twoContainers();
    await h.kubelet.sync(desired(base));
    await h.advance(5);
    const sideId = h.pod(base.key)!.app[1]!.containerId;
    const mark = h.events.length;
    await h.kubelet.sync(desired(updated(base, (spec) => withImage(spec, "web", "busybox:2"))));
    await h.advance(1);
    const after = h.events.slice(mark);
    expect(after.map((e) => `${e.reason} ${e.container}: ${e.message}`)).toEqual([
      "Killing web: Container web definition changed, will be restarted",
      "Exited web: Container web exited with code 143 (Error)",
      "Created web: Created container: web",
      "Started web: Started container web",
    ]);
    const record = h.pod(base.key)!;
    expect(record.spec.uid).toBe(base.uid);
    expect(record.app.map((c) => [c.name, c.state, restartCountOf(c), c.spec.image])).toEqual([
      ["web", "running", 1, "busybox:2"],
      ["side", "running", 0, "busybox:1.36"],
    ]);
    expect(record.app[1]!.containerId).toBe(sideId!);
    expect(h.runtime.calls.filter((c) => c.startsWith("start")).at(-1)).toContain("web");
  });

  test("a container that ignores SIGTERM is killed after the pod's grace period, then started with the new image", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    const base = twoContainers();
    await h.kubelet.sync(desired(base));
    await h.advance(1);
    await h.kubelet.sync(desired(updated(base, (spec) => withImage(spec, "web", "busybox:2"))));
    await h.advance(4);
    expect(h.pod(base.key)!.app[0]!.state).toBe("running");
    expect(restartCountOf(h.pod(base.key)!.app[0]!)).toBe(0);
    await h.advance(2);
    expect(restartCountOf(h.pod(base.key)!.app[0]!)).toBe(1);
    expect(h.pod(base.key)!.app[0]!.lastTermination?.exitCode).toBe(137);
  });

  test("the restart ignores restartPolicy Never and a pending back-off", async () => {
    const h = harness();
    const base = twoContainers("Never");
    await h.kubelet.sync(desired(base));
    await h.advance(1);
    await h.kubelet.sync(desired(updated(base, (spec) => withImage(spec, "side", "busybox:3"))));
    await h.advance(1);
    const side = h.pod(base.key)!.app[1]!;
    expect([side.state, restartCountOf(side), side.spec.image]).toEqual(["running", 1, "busybox:3"]);
  });

  test("a sidecar's new image restarts the sidecar; a finished init container's new image runs nothing again", async () => {
    const h = harness();
    h.runtime.behaviours.set("setup", { exitAfterMs: 100, exitCode: 0 });
    const base = pod({ name: "web", grace: 5, init: [container("setup"), container("proxy", { restartPolicy: "Always" })], containers: [container("web")] });
    await h.kubelet.sync(desired(base));
    await h.advance(2);
    const mark = h.events.length;
    const withInitImages = (spec: PodSpec): PodSpec => ({ ...spec, initContainers: spec.initContainers.map((c) => ({ ...c, image: "busybox:2" })) });
    await h.kubelet.sync(desired(updated(base, withInitImages)));
    await h.advance(2);
    expect(h.events.slice(mark).map((e) => `${e.reason} ${e.container}`)).toEqual(["Killing proxy", "Exited proxy", "Created proxy", "Started proxy"]);
    const record = h.pod(base.key)!;
    expect(record.init.map((c) => [c.name, c.state, restartCountOf(c), c.spec.image])).toEqual([
      ["setup", "terminated", 0, "busybox:2"],
      ["proxy", "running", 1, "busybox:2"],
    ]);
    expect(restartCountOf(record.app[0]!)).toBe(0);
  });

  test("a change of labels or annotations restarts nothing", async () => {
    const h = harness();
    const base = twoContainers();
    await h.kubelet.sync(desired(base));
    await h.advance(1);
    const mark = h.events.length;
    await h.kubelet.sync(desired(updated(base, (spec) => ({ ...spec, labels: { tier: "front" }, annotations: { note: "x" } }))));
    await h.advance(5);
    expect(h.events.slice(mark)).toEqual([]);
    expect(h.pod(base.key)!.spec.labels).toEqual({ tier: "front" });
    expect(h.pod(base.key)!.app.map((c) => restartCountOf(c))).toEqual([0, 0]);
  });

  test("an edited file (a new uid) is still a new pod: every container stops and the new pod starts", async () => {
    const h = harness();
    const base = twoContainers();
    await h.kubelet.sync(desired(base));
    await h.advance(1);
    const edited = { ...withImage(base, "web", "busybox:2"), uid: "uid-web-2", configHash: "hash-web-2" };
    await h.kubelet.sync(desired(edited));
    await h.advance(2);
    const record = h.pod(base.key)!;
    expect(record.spec.uid).toBe("uid-web-2");
    expect(record.app.map((c) => restartCountOf(c))).toEqual([0, 0]);
    expect(h.events.filter((e) => e.reason === "Killing").map((e) => e.message)).toEqual(["Stopping container web", "Stopping container side"]);
  });
});

describe("a pod updated in place across an agent restart", () => {
  test("an update the old agent never saw restarts the changed container once the next agent has adopted the pod", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const base = twoContainers();
    await first.kubelet.sync(desired(base));
    const side = first.kubelet.pods.get(base.key)!.app[1]!.containerId;
    const next = updated(base, (spec) => withImage(spec, "web", "busybox:2"));
    const second = await restart(clock, runtime, store, first.kubelet, desired(next));
    await second.advance(1);
    const record = second.kubelet.pods.get(base.key)!;
    expect(record.app.map((c) => [c.name, restartCountOf(c), c.spec.image])).toEqual([
      ["web", 1, "busybox:2"],
      ["side", 0, "busybox:1.36"],
    ]);
    expect(record.app[1]!.containerId).toBe(side!);
    expect(second.events.filter((e) => e.reason === "Killing").map((e) => e.message)).toEqual(["Container web definition changed, will be restarted"]);
  });

  test("an agent killed while the changed container was stopping: the next one finishes the restart (the mark is checkpointed)", async () => {
    const { clock, runtime, store } = world();
    runtime.behaviours.set("web", { ignoreSigterm: true });
    const first = agent(clock, runtime, store);
    // Under Never only the mark restarts it: the exit alone would leave it terminated.
    const base = twoContainers("Never");
    await first.kubelet.sync(desired(base));
    const next = updated(base, (spec) => withImage(spec, "web", "busybox:2"));
    await first.kubelet.sync(desired(next));
    expect(first.kubelet.pods.get(base.key)!.app[0]!.stopping?.cause).toBe("changed");
    const second = await restart(clock, runtime, store, first.kubelet, desired(next));
    await second.advance(10);
    const web = second.kubelet.pods.get(base.key)!.app[0]!;
    expect([web.state, restartCountOf(web), web.spec.image, web.definitionChanged]).toEqual(["running", 1, "busybox:2", undefined]);
    expect(runtime.startsOf("web")).toBe(2);
  });
});
