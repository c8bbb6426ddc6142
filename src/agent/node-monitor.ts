/**
 * The node half of `run`: records how allocatable is carved out (the flags) for the API, and keeps
 * DiskPressure current: the monitor looks after writes and every 10 s; each change is recorded,
 * said in the kubelet's node events and a log line, and told to the loop (waiting pods start).
 */
import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import type { Clock } from "../clock.ts";
import { DiskPressureMonitor, describeObservation, type Statfs } from "../eviction/disk-pressure.ts";
import { formatEvictionHard } from "../eviction/thresholds.ts";
import type { KubeEvent } from "../kube-event.ts";
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

/** Records the node's set-up, then watches the filesystems of the database and of the pods' files. */
export function startNodeMonitor(options: NodeMonitorOptions): DiskPressureMonitor {
  const { db, dbPath, nodeName, reservations, clock, log, emit } = options;
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
  const monitor = new DiskPressureMonitor({
    paths: [dirname(dbPath), runtimeRootOf(dbPath)],
    threshold: reservations.evictionHard["nodefs.available"],
    clock,
    statfs: options.statfs,
    // The previous agent's verdict stands until a look says otherwise: a restart under pressure says nothing new.
    initialPressure: readNodeStatus(db)?.diskPressure ?? false,
    onChange: (observation) => {
      const at = clock.now();
      recordDiskPressure(db, observation.pressure, at);
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
  });
  monitor.start();
  return monitor;
}

/** Like the kubelet's node events, its object is the node, whose uid is its name; the empty pod key marks it as no pod's. */
function nodeEvent(nodeName: string, at: number, type: KubeEvent["type"], reason: string, message: string): KubeEvent {
  return { at, type, reason, podKey: "", namespace: "default", pod: nodeName, podUid: nodeName, container: "", message };
}
