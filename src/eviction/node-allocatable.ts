/**
 * What the node offers pods, in one place: the API's Node object reports it and the loop's admission
 * checks pods against it, so `kubectl describe node` and a refused pod's message agree.
 */
import { cpus, totalmem } from "node:os";
import { parseQuantity, QuantityError } from "../manifest/quantity.ts";
import { thresholdBytes, type EvictionThresholds } from "./thresholds.ts";
import { realStatfs } from "./disk-pressure.ts";

/** The kubelet's default --max-pods. */
export const MAX_PODS = 110;

export interface HostCapacity {
  cpus: number;
  memoryTotalKi: number;
  /** The filesystem holding the pods' directories (logs, volumes): the node's ephemeral-storage. */
  ephemeralStorageBytes: bigint;
}

/** `--system-reserved` or `--kube-reserved`: taken off allocatable, never enforced on anything. */
export interface ReservedResources {
  cpuMillis: bigint;
  memoryBytes: bigint;
  ephemeralStorageBytes: bigint;
}

export const NOTHING_RESERVED: ReservedResources = { cpuMillis: 0n, memoryBytes: 0n, ephemeralStorageBytes: 0n };

/** How the agent carves allocatable out of capacity (run's flags). */
export interface NodeReservations {
  evictionHard: EvictionThresholds;
  systemReserved: ReservedResources;
  kubeReserved: ReservedResources;
}

/** Allocatable as admission counts it: millicores, bytes and a pod count. */
export interface NodeAllocatable {
  cpuMillis: bigint;
  memoryBytes: bigint;
  ephemeralStorageBytes: bigint;
  pods: number;
}

/** `podsDir` is where the pods' files go; its filesystem is the ephemeral-storage capacity. */
export function readHostCapacity(podsDir: string): HostCapacity {
  let ephemeralStorageBytes = 0n;
  try {
    ephemeralStorageBytes = realStatfs(podsDir).totalBytes;
  } catch {
    // Unreadable: no capacity known, and no pod asking for ephemeral-storage fits.
  }
  return { cpus: cpus().length, memoryTotalKi: Math.floor(totalmem() / 1024), ephemeralStorageBytes };
}

/**
 * The kubelet's allocatable (GetNodeAllocatableReservation): capacity less kube-reserved, less
 * system-reserved, less the hard eviction threshold of memory.available (memory) and
 * nodefs.available (ephemeral-storage); never below zero.
 */
export function nodeAllocatable(capacity: HostCapacity, reservations: NodeReservations, maxPods = MAX_PODS): NodeAllocatable {
  const { evictionHard, systemReserved, kubeReserved } = reservations;
  const memoryBytes = BigInt(capacity.memoryTotalKi) * 1024n;
  const cpuMillis = BigInt(capacity.cpus) * 1000n;
  return {
    cpuMillis: atLeastZero(cpuMillis - systemReserved.cpuMillis - kubeReserved.cpuMillis),
    memoryBytes: atLeastZero(memoryBytes - systemReserved.memoryBytes - kubeReserved.memoryBytes - thresholdBytes(evictionHard["memory.available"], memoryBytes)),
    ephemeralStorageBytes: atLeastZero(
      capacity.ephemeralStorageBytes -
        systemReserved.ephemeralStorageBytes -
        kubeReserved.ephemeralStorageBytes -
        thresholdBytes(evictionHard["nodefs.available"], capacity.ephemeralStorageBytes),
    ),
    pods: maxPods,
  };
}

export class ReservedError extends Error {
  override readonly name = "ReservedError";
}

const RESERVABLE = ["cpu", "memory", "ephemeral-storage"] as const;

/** `cpu=500m,memory=1Gi,ephemeral-storage=10Gi`, as the kubelet's --system-reserved reads it; `flag` names it in errors. */
export function parseReserved(flag: string, text: string): ReservedResources {
  const reserved = { ...NOTHING_RESERVED };
  for (const pair of text.split(",").map((part) => part.trim())) {
    if (pair === "") continue;
    const [name, value, extra] = pair.split("=");
    if (value === undefined || extra !== undefined) throw new ReservedError(`${flag}: ${JSON.stringify(pair)} is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)`);
    if (!RESERVABLE.includes(name as (typeof RESERVABLE)[number])) throw new ReservedError(`${flag}: ${name} cannot be reserved (only ${RESERVABLE.join(", ")})`);
    let quantity;
    try {
      quantity = parseQuantity(value);
    } catch (error) {
      if (error instanceof QuantityError) throw new ReservedError(`${flag}: ${name}=${value}: ${error.message}`);
      throw error;
    }
    if (quantity.sign() < 0) throw new ReservedError(`${flag}: ${name}=${value}: must be greater than or equal to 0`);
    if (name === "cpu") reserved.cpuMillis = quantity.milliValue();
    else if (name === "memory") reserved.memoryBytes = quantity.value();
    else reserved.ephemeralStorageBytes = quantity.value();
  }
  return reserved;
}

/** Back in the flag's syntax (`cpu=500m,memory=1Gi`), for the database and the banner; empty for nothing. */
export function formatReserved(reserved: ReservedResources): string {
  const parts: string[] = [];
  if (reserved.cpuMillis > 0n) parts.push(`cpu=${reserved.cpuMillis}m`);
  if (reserved.memoryBytes > 0n) parts.push(`memory=${reserved.memoryBytes}`);
  if (reserved.ephemeralStorageBytes > 0n) parts.push(`ephemeral-storage=${reserved.ephemeralStorageBytes}`);
  return parts.join(",");
}

function atLeastZero(value: bigint): bigint {
  return value < 0n ? 0n : value;
}
