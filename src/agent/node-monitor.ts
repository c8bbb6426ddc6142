/**
 * The node half of `run`: records how allocatable is carved out (the flags) for the API, and keeps
 * DiskPressure current: the monitor looks after writes and every 10 s; each change is held in
 * memory (what the loop's admission and the API's Node read under `run`), said in the kubelet's node
 * events and a log line, told to the loop (waiting pods start) and written to the database. A full
 * disk is the very moment that write fails: the verdict stands in memory, and each later look writes
 * it again until the database takes it.
 */
import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import type { Clock } from "../clock.ts";
import { DiskPressureMonitor, describeObservation, type DiskPressureCondition, type Statfs } from "../eviction/disk-pressure.ts";
import { formatEvictionHard } from "../eviction/thresholds.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import { formatReserved, type NodeReservations } from "../eviction/node-allocatable.ts";
import { runtimeRootOf } from "../store/db-path.ts";
import { readNodeStatus, recordDiskPressure, recordNodeStatus } from "../store/node-status.ts";

export interface NodeMonitorOptions {
  db: Database;
  dbPath: string;
  nodeName: string;
  reservations: NodeReservations;
  clock: Clock;
  log: (message: string) => void;
  /** Prints and saves node events (the kubelet records them on the Node). */
  emit: (events: KubeEvent[]) => void;
  /** Told once DiskPressure changed (the loop's nodeConditionsChanged). */
  changed: () => void;
  statfs?: Statfs;
}

export interface NodeMonitor {
  /** DiskPressure now (the loop's admission reads it). */
  readonly pressure: boolean;
  /** The condition as held in memory, written or not (the API's Node under `run`). */
  condition(): DiskPressureCondition;
  /** Something was written: a look, at most once a second. */
  noteWrite(): void;
  stop(): void;
}

/** Records the node's set-up, then watches the filesystems of the database and of the pods' files. */
export function startNodeMonitor(options: NodeMonitorOptions): NodeMonitor {
  const { db, dbPath, nodeName, reservations, clock, log, emit } = options;
  const failure = (error: unknown) => (error instanceof Error ? error.message : String(error));
  try {
    recordNodeStatus(
      db,
      {
        evictionHard: formatEvictionHard(reservations.evictionHard),
        systemReserved: formatReserved(reservations.systemReserved),
        kubeReserved: formatReserved(reservations.kubeReserved),
        diskPressure: false,
        diskPressureSince: clock.now(),
      },
      clock.now(),
    );
  } catch (error) {
    // The pods matter more than this row: the API serves the node from memory meanwhile.
    log(`node status: cannot record it in the database: ${failure(error)}`);
  }
  const recorded = readNodeStatus(db);
  let condition: DiskPressureCondition = { pressure: recorded?.diskPressure ?? false, since: recorded?.diskPressureSince ?? clock.now() };
  /** The condition the database does not hold yet (its write failed), said once until it is written. */
  let unwritten: (DiskPressureCondition & { reported: boolean }) | undefined;
  const write = () => {
    const wanted = unwritten;
    if (!wanted) return;
    try {
      recordDiskPressure(db, wanted.pressure, wanted.since);
    } catch (error) {
      if (!wanted.reported) log(`disk pressure: cannot record ${wanted.pressure ? "DiskPressure" : "its end"} in the database (${failure(error)}); served from memory, written once the database takes it`);
      unwritten = { ...wanted, reported: true };
      return;
    }
    if (wanted.reported) log(`disk pressure: ${wanted.pressure ? "DiskPressure" : "its end"} recorded in the database`);
    unwritten = undefined;
  };
  const monitor = new DiskPressureMonitor({
    paths: [dirname(dbPath), runtimeRootOf(dbPath)],
    threshold: reservations.evictionHard["nodefs.available"],
    clock,
    statfs: options.statfs,
    // The previous agent's verdict stands until a look says otherwise: a restart under pressure says nothing new.
    initialPressure: condition.pressure,
    onChange: (observation) => {
      const at = clock.now();
      condition = { pressure: observation.pressure, since: at };
      unwritten = { ...condition, reported: false };
      if (observation.pressure) {
        log(`disk pressure: ${describeObservation(observation)}; new pods wait until it clears (nothing running is stopped)`);
        emit([nodeEvent(nodeName, at, "Normal", "NodeHasDiskPressure", `Node ${nodeName} status is now: NodeHasDiskPressure`), nodeEvent(nodeName, at, "Warning", "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage")]);
      } else {
        log(`disk pressure cleared: ${describeObservation(observation)}`);
        emit([nodeEvent(nodeName, at, "Normal", "NodeHasNoDiskPressure", `Node ${nodeName} status is now: NodeHasNoDiskPressure`)]);
      }
      options.changed();
    },
    onError: (path, error) => log(`disk pressure: cannot read the filesystem of ${path}: ${error.message}`),
    afterCheck: write,
  });
  monitor.start();
  return {
    get pressure() {
      return monitor.pressure;
    },
    condition: () => condition,
    noteWrite: () => monitor.noteWrite(),
    stop: () => monitor.stop(),
  };
}

/** Like the kubelet's node events, its object is the node, whose uid is its name; the empty pod key marks it as no pod's. */
function nodeEvent(nodeName: string, at: number, type: KubeEvent["type"], reason: string, message: string): KubeEvent {
  return { at, type, reason, podKey: "", namespace: "default", pod: nodeName, podUid: nodeName, container: "", message };
}
