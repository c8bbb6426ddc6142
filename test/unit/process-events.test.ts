import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContainerEvents } from "../../src/runtime/process/process-events.ts";
import type { RuntimeEvent } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Container events over a real events directory, with a clock the test steps and a status it sets. */
function setup() {
  const eventsDir = mkdtempSync(join(tmpdir(), "minikubelet-events-"));
  const clock = new FakeClock();
  const exited = new Set<string>();
  const statusReads: string[] = [];
  const events = new ContainerEvents({
    eventsDirs: [eventsDir],
    clock,
    hasExited: (id) => {
      statusReads.push(id);
      return exited.has(id);
    },
  });
  const heard: RuntimeEvent[] = [];
  events.subscribe((event) => heard.push(event));
  cleanups.push(() => {
    events.close();
    rmSync(eventsDir, { recursive: true, force: true });
  });
  /** Steps the clock by `ms`, relisting every 5 s on the way as the PLEG does for this runtime. */
  const relistFor = (ms: number) => {
    for (let at = 0; at < ms; at += 5000) {
      clock.step(Math.min(5000, ms - at));
      events.recheck();
    }
  };
  return { eventsDir, clock, exited, statusReads, events, heard, relistFor };
}

test("the periodic backstop reads no container's status while every monitor is the agent's child and no marker is new", () => {
  const { statusReads, events, relistFor } = setup();
  for (let i = 0; i < 100; i++) {
    events.ownChild(`c${i}`);
    events.track(`c${i}`);
  }
  relistFor(120_000);
  expect(statusReads).toEqual([]);
});

test("the backstop reports an exit whose marker the directory watch did not deliver", () => {
  const { eventsDir, exited, statusReads, events, heard, relistFor } = setup();
  for (const id of ["a", "b"]) {
    events.ownChild(id);
    events.track(id);
  }
  exited.add("b");
  writeFileSync(join(eventsDir, "b.exited"), "");
  relistFor(5000);
  expect(heard.filter((e) => e.type === "exited")).toEqual([{ type: "exited", containerId: "b" }]);
  expect(statusReads.filter((id) => id === "a")).toEqual([]);
});

test("a container whose monitor is not the agent's child (adopted, or its monitor died) is looked at once a minute, not on every pass", () => {
  const { exited, statusReads, events, heard, relistFor } = setup();
  events.track("adopted");
  events.ownChild("orphaned");
  events.track("orphaned");
  events.monitorExited("orphaned");
  const reads = statusReads.length;
  relistFor(55_000);
  const early = statusReads.length - reads;
  exited.add("adopted");
  exited.add("orphaned");
  relistFor(5000);
  expect(early).toBeLessThanOrEqual(2);
  expect(heard.filter((e) => e.type === "exited").map((e) => (e.type === "exited" ? e.containerId : "")).sort()).toEqual(["adopted", "orphaned"]);
});
