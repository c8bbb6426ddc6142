/**
 * The node's row (migration 0007): the flags that carve allocatable out of capacity, written once
 * at agent start, and the DiskPressure condition, written when the agent's monitor sees it change.
 * Readers (the API's Node object, under `run` and `serve`) report them as the agent left them.
 */
import type { Database } from "bun:sqlite";

export interface RecordedNodeStatus {
  /** `--eviction-hard`, in the flag's syntax with the defaults filled in. */
  evictionHard: string;
  systemReserved: string;
  kubeReserved: string;
  diskPressure: boolean;
  /** When DiskPressure last changed (the condition's lastTransitionTime). */
  diskPressureSince: number;
}

/**
 * At agent start: its flags. The DiskPressure given is taken only by a first agent; after that the
 * previous agent's verdict stands until this agent's monitor records a change.
 */
export function recordNodeStatus(db: Database, status: RecordedNodeStatus, now: number): void {
  db.query(
    `INSERT INTO node_status (singleton, eviction_hard, system_reserved, kube_reserved, disk_pressure, disk_pressure_since, recorded_at)
     VALUES (1, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (singleton) DO UPDATE SET eviction_hard = excluded.eviction_hard, system_reserved = excluded.system_reserved,
       kube_reserved = excluded.kube_reserved, recorded_at = excluded.recorded_at`,
  ).run(status.evictionHard, status.systemReserved, status.kubeReserved, status.diskPressure ? 1 : 0, status.diskPressureSince, now);
}

/** A change of DiskPressure; the row exists once the agent has started. */
export function recordDiskPressure(db: Database, pressure: boolean, at: number): void {
  db.query("UPDATE node_status SET disk_pressure = ?, disk_pressure_since = ?, recorded_at = ? WHERE singleton = 1 AND disk_pressure <> ?").run(
    pressure ? 1 : 0,
    at,
    at,
    pressure ? 1 : 0,
  );
}

/** Undefined for a database no agent of this version has run on (`serve` may read one not yet migrated). */
export function readNodeStatus(db: Database): RecordedNodeStatus | undefined {
  let row;
  try {
    row = selectRow(db);
  } catch (error) {
    if (/no such table/.test((error as Error).message)) return undefined;
    throw error;
  }
  if (!row) return undefined;
  return {
    evictionHard: row.eviction_hard,
    systemReserved: row.system_reserved,
    kubeReserved: row.kube_reserved,
    diskPressure: row.disk_pressure === 1,
    diskPressureSince: row.disk_pressure_since,
  };
}

function selectRow(db: Database) {
  return db.query("SELECT eviction_hard, system_reserved, kube_reserved, disk_pressure, disk_pressure_since FROM node_status WHERE singleton = 1").get() as {
    eviction_hard: string;
    system_reserved: string;
    kube_reserved: string;
    disk_pressure: number;
    disk_pressure_since: number;
  } | null;
}
