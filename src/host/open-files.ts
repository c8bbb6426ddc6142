/**
 * The process's open-files limit (RLIMIT_NOFILE). The agent raises its soft limit to the hard one at
 * start, as the kubelet's host setup does for it, and the API sizes its connection bound from what
 * is left after a reserve for the loop (store, manifests, runtime, logs).
 */
import { ptr } from "bun:ffi";
import { openLibc } from "./libc.ts";

/** RLIMIT_NOFILE on Linux (x86-64 and arm64 alike). */
const RLIMIT_NOFILE = 7;

/**
 * Descriptors the API's connections may never take: what the loop needs at its busiest (the
 * database and its WAL, a manifest scan, each container's log and pipes, a docker socket) with room.
 */
export const LOOP_DESCRIPTOR_RESERVE = 256;

export interface OpenFilesLimit {
  soft: number;
  hard: number;
}

let libc: { getrlimit(resource: number, limit: unknown): number; setrlimit(resource: number, limit: unknown): number } | undefined;
function rlimitCalls(): NonNullable<typeof libc> {
  libc ??= openLibc({
    getrlimit: { args: ["i32", "ptr"], returns: "i32" },
    setrlimit: { args: ["i32", "ptr"], returns: "i32" },
  }) as unknown as NonNullable<typeof libc>;
  return libc;
}

/** struct rlimit { rlim_t rlim_cur, rlim_max }: two 64-bit values on 64-bit Linux. RLIM_INFINITY reads as the largest safe number. */
function toNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

export function openFilesLimit(): OpenFilesLimit {
  const limit = new BigUint64Array(2);
  if (rlimitCalls().getrlimit(RLIMIT_NOFILE, ptr(limit)) !== 0) throw new Error("getrlimit(RLIMIT_NOFILE) failed");
  return { soft: toNumber(limit[0]!), hard: toNumber(limit[1]!) };
}

/** Raises the soft limit to the hard one (a no-op when they are equal); returns the limit now in force. */
export function raiseOpenFilesLimit(): OpenFilesLimit {
  const limit = new BigUint64Array(2);
  const calls = rlimitCalls();
  if (calls.getrlimit(RLIMIT_NOFILE, ptr(limit)) !== 0) throw new Error("getrlimit(RLIMIT_NOFILE) failed");
  if (limit[0]! < limit[1]!) {
    limit[0] = limit[1]!;
    // Refused (a hard limit above the kernel's nr_open): the soft limit stays as it was, which is still safe.
    calls.setrlimit(RLIMIT_NOFILE, ptr(limit));
  }
  return openFilesLimit();
}

/**
 * The connections the API may hold within `soft` descriptors: each costs up to three (the client's
 * socket, the front door's pipe to the server behind it, and that server's end of the pipe), and
 * the reserve is never theirs. At least one, so a tiny limit still leaves the API reachable.
 */
export function connectionsWithin(soft: number, configured: number): number {
  return Math.max(1, Math.min(configured, Math.floor((soft - LOOP_DESCRIPTOR_RESERVE) / 3)));
}
