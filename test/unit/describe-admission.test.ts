/** Issue 14: a pod refused at admission reads as the kubelet leaves it, in `get pods`, `describe` and `events`. */
import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { eventsCommand } from "../../src/cli/events/events.ts";
import { getCommand } from "../../src/cli/get/get.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const MESSAGE = "Node didn't have enough resource: cpu, requested: 3000, used: 500, capacity: 2000";

test("a pod refused with OutOfcpu is listed, described and in the events with the kubelet's reason and message", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path, { allocatable: { cpuMillis: 2000n, memoryBytes: 1n << 30n, ephemeralStorageBytes: 1n << 40n, pods: 110 } });
  const needs = (cpu: string) => ({ resources: { limits: {}, requests: { cpu } } });
  await h.kubelet.sync(desired(pod({ name: "small", containers: [container("small", needs("500m"))] }), pod({ name: "big", containers: [container("big", needs("3"))] })));
  await h.advance(2);
  const deps = { clock: h.clock, stderr: () => {}, utcOffsetMinutes: 0 };

  let listed = "";
  await getCommand("pods", undefined, { db: h.dbPath, namespace: "demo" }, { ...deps, stdout: (t) => (listed += t) });
  expect(listed).toMatch(/\nbig-lab +0\/1 +OutOfcpu +0 /);
  expect(listed).toMatch(/\nsmall-lab +1\/1 +Running +0 /);

  let described = "";
  await describeCommand("pod", "big-lab", { db: h.dbPath }, { ...deps, stdout: (t) => (described += t) });
  expect(described).toMatch(/\nStatus: +Failed\n/);
  expect(described).toMatch(/\nReason: +OutOfcpu\n/);
  expect(described).toMatch(new RegExp(`\\nMessage: +Pod was rejected: ${MESSAGE}\\n`));
  expect(described).toMatch(new RegExp(`Warning +OutOfcpu +.* +kubelet +${MESSAGE}\\n`));

  let events = "";
  await eventsCommand({ db: h.dbPath, for: "pod/big-lab" }, { ...deps, stdout: (t) => (events += t) });
  expect(events).toContain("OutOfcpu");
  h.agent.close();
});
