/**
 * Issue 14: the node half of `run` on a real database with a fake statfs and clock: the flags and
 * DiskPressure are recorded, the kubelet's node events are said, and the API's Node (under `run`
 * and `serve`) reports the agent's verdict and its allocatable.
 */
import type { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { nodeRoutes } from "../../src/api/resources/nodes-api.ts";
import type { FilesystemUsage } from "../../src/eviction/disk-pressure.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import { parseReserved, NOTHING_RESERVED } from "../../src/eviction/node-allocatable.ts";
import { startNodeMonitor } from "../../src/agent/node-monitor.ts";
import { runtimeRootOf } from "../../src/store/db-path.ts";
import { readNodeStatus } from "../../src/store/node-status.ts";
import { apiContext, call } from "../api-objects-fixtures.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const Gi = 1n << 30n;

/** SQLite's answer to a write on a full disk, as bun:sqlite throws it. */
function sqliteFull(): Error {
  return Object.assign(new Error("database or disk is full"), { name: "SQLiteError", code: "SQLITE_FULL", errno: 13 });
}

/** The agent's connection, whose writes throw SQLITE_FULL while `full.on` (reads still work, as on a full disk). */
function fillable(db: Database, full: { on: boolean }): Database {
  return new Proxy(db, {
    get(target, key) {
      if (key !== "query") return Reflect.get(target, key, target);
      return (sql: string) => {
        const statement = target.query(sql);
        if (!/^\s*(INSERT|UPDATE|DELETE)/i.test(sql)) return statement;
        return new Proxy(statement, {
          get(inner, name) {
            const value = Reflect.get(inner, name, inner);
            if (name !== "run" || typeof value !== "function") return typeof value === "function" ? value.bind(inner) : value;
            return (...args: unknown[]) => {
              if (full.on) throw sqliteFull();
              return value.apply(inner, args);
            };
          },
        });
      };
    },
  });
}

function agentNode(dir: string, free: { bytes: bigint }, evictionHard = "nodefs.available<10%", full = { on: false }) {
  const h = storeHarness(dir);
  mkdirSync(runtimeRootOf(h.dbPath), { recursive: true });
  const events: KubeEvent[] = [];
  const logged: string[] = [];
  let changes = 0;
  const statfs = (path: string): FilesystemUsage => {
    expect([dirname(h.dbPath), runtimeRootOf(h.dbPath)]).toContain(path);
    return { totalBytes: 100n * Gi, availableBytes: free.bytes };
  };
  const start = () =>
    startNodeMonitor({
      db: fillable(h.agent.db, full),
      dbPath: h.dbPath,
      nodeName: "lab",
      reservations: { evictionHard: parseEvictionHard(evictionHard), systemReserved: parseReserved("--system-reserved", "cpu=500m,memory=1Gi"), kubeReserved: NOTHING_RESERVED },
      clock: h.clock,
      log: (line) => logged.push(line),
      emit: (batch) => {
        events.push(...batch);
        h.store.saveEvents(batch);
      },
      changed: () => changes++,
      statfs,
    });
  return { h, events, logged, start, changes: () => changes };
}

test("DiskPressure is recorded with the kubelet's node events, served on the Node, and cleared", async () => {
  using dir = tempDir();
  const free = { bytes: 5n * Gi };
  const { h, events, logged, start, changes } = agentNode(dir.path, free);
  const monitor = start();
  expect(monitor.pressure).toBe(true);
  expect(events.map((e) => `${e.type} ${e.reason} ${e.pod}: ${e.message}`)).toEqual([
    "Normal NodeHasDiskPressure lab: Node lab status is now: NodeHasDiskPressure",
    "Warning EvictionThresholdMet lab: Attempting to reclaim ephemeral-storage",
  ]);
  expect(logged).toEqual([`disk pressure: 5.0Gi available of 100.0Gi on the filesystem of ${dirname(h.dbPath)}, threshold 10.0Gi; new pods wait until it clears (nothing running is stopped)`]);
  expect(changes()).toBe(1);
  expect(readNodeStatus(h.agent.db)).toEqual({
    evictionHard: "memory.available<100Mi,nodefs.available<10%",
    systemReserved: "cpu=500m,memory=1073741824",
    kubeReserved: "",
    diskPressure: true,
    diskPressureSince: h.clock.now(),
  });

  {
    using api = apiContext(h.dbPath, h.clock, { runtime: { name: "process" } });
    const node = (await call(nodeRoutes, "GET", "/api/v1/nodes/lab", api)).body;
    expect(node.status.conditions.find((c: any) => c.type === "DiskPressure")).toMatchObject({ status: "True", reason: "KubeletHasDiskPressure" });
    expect(node.spec.taints).toEqual([{ key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule", timeAdded: new Date(h.clock.now()).toISOString().replace(".000Z", "Z") }]);
    // --system-reserved cpu=500m is off the host's CPUs.
    expect(node.status.allocatable.cpu).toMatch(/^\d+500m$/);
  }

  free.bytes = 50n * Gi;
  h.clock.step(10_000);
  expect(monitor.pressure).toBe(false);
  expect(events.at(-1)).toMatchObject({ type: "Normal", reason: "NodeHasNoDiskPressure", message: "Node lab status is now: NodeHasNoDiskPressure" });
  expect(changes()).toBe(2);
  // Under serve (no runtime) the recorded verdict is what is reported.
  using api = apiContext(h.dbPath, h.clock);
  const node = (await call(nodeRoutes, "GET", "/api/v1/nodes/lab", api)).body;
  expect(node.status.conditions.find((c: any) => c.type === "DiskPressure")).toMatchObject({ status: "False", reason: "KubeletHasNoDiskPressure" });
  expect(node.spec).toEqual({});
  monitor.stop();
  h.agent.close();
});

test("an agent restarted under the same pressure says nothing new; one that finds it gone clears it", () => {
  using dir = tempDir();
  const free = { bytes: 5n * Gi };
  const { h, events, start } = agentNode(dir.path, free);
  start().stop();
  const since = readNodeStatus(h.agent.db)!.diskPressureSince;
  expect(events).toHaveLength(2);
  h.clock.step(60_000);
  start().stop();
  expect(events).toHaveLength(2);
  expect(readNodeStatus(h.agent.db)).toMatchObject({ diskPressure: true, diskPressureSince: since });
  free.bytes = 50n * Gi;
  start().stop();
  expect(events.map((e) => e.reason).at(-1)).toBe("NodeHasNoDiskPressure");
  expect(readNodeStatus(h.agent.db)?.diskPressure).toBe(false);
  h.agent.close();
});

test("a full disk: DiskPressure is held in memory and served while the database refuses it, then written once it takes it", async () => {
  using dir = tempDir();
  const free = { bytes: 50n * Gi };
  const full = { on: false };
  const { h, events, logged, start, changes } = agentNode(dir.path, free, "nodefs.available<10%", full);
  const monitor = start();
  expect(monitor.pressure).toBe(false);

  free.bytes = 0n;
  full.on = true;
  const filledAt = h.clock.now() + 10_000;
  // The look that finds the disk full must not throw out of the timer: the write is what fails.
  h.clock.step(10_000);
  expect(monitor.pressure).toBe(true);
  expect(monitor.condition()).toEqual({ pressure: true, since: filledAt });
  expect(changes()).toBe(1);
  expect(events.map((e) => e.reason)).toEqual(["NodeHasDiskPressure", "EvictionThresholdMet"]);
  expect(readNodeStatus(h.agent.db)?.diskPressure).toBe(false);
  const refused = logged.filter((line) => line.includes("cannot record"));
  expect(refused).toEqual(["disk pressure: cannot record DiskPressure in the database (database or disk is full); served from memory, written once the database takes it"]);
  {
    // The API under `run` serves the verdict the database could not take.
    using api = apiContext(h.dbPath, h.clock, { runtime: { name: "process" } });
    const node = (await call(nodeRoutes, "GET", "/api/v1/nodes/lab", { ...api, diskPressure: () => monitor.condition() })).body;
    expect(node.status.conditions.find((c: any) => c.type === "DiskPressure")).toMatchObject({ status: "True", reason: "KubeletHasDiskPressure", lastTransitionTime: new Date(filledAt).toISOString().replace(".000Z", "Z") });
  }

  // Still full: each look tries again, quietly.
  h.clock.step(30_000);
  expect(logged.filter((line) => line.includes("cannot record"))).toHaveLength(1);
  expect(readNodeStatus(h.agent.db)?.diskPressure).toBe(false);

  // Room for the database again (still under the threshold): the next look writes the verdict, with when it began.
  full.on = false;
  h.clock.step(10_000);
  expect(readNodeStatus(h.agent.db)).toMatchObject({ diskPressure: true, diskPressureSince: filledAt });
  expect(logged.at(-1)).toBe("disk pressure: DiskPressure recorded in the database");

  free.bytes = 50n * Gi;
  h.clock.step(10_000);
  expect(monitor.pressure).toBe(false);
  expect(readNodeStatus(h.agent.db)).toMatchObject({ diskPressure: false, diskPressureSince: h.clock.now() });
  expect(events.at(-1)?.reason).toBe("NodeHasNoDiskPressure");
  monitor.stop();
  h.agent.close();
});
