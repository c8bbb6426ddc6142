import { describe, expect, test } from "bun:test";
import { PodWorkers } from "../../src/kubelet/pod-workers.ts";

describe("pod workers", () => {
  test("a worker whose error report throws is still released: the pod syncs again on the next request", async () => {
    const synced: string[] = [];
    let fail = true;
    const workers = new PodWorkers(
      async (key) => {
        synced.push(key);
        if (fail) throw new Error("disk full");
      },
      () => {
        throw new Error("cannot save the report either");
      },
    );
    workers.dispatch("demo/web");
    await workers.idle().catch(() => {});
    expect(workers.busy()).toBe(false);
    fail = false;
    workers.dispatch("demo/web");
    await workers.idle();
    expect(synced).toEqual(["demo/web", "demo/web"]);
  });
});
