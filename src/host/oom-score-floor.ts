/**
 * The lowest OOM score adjustment this host lets the agent (and the runtimes it drives) give a
 * process: below the caller's own floor only with CAP_SYS_RESOURCE (proc(5), oom_score_adj). A
 * sandboxed host (gVisor, a container without the capability) refuses a negative value, and a
 * runtime asked for one fails the container's start (runc: `can't get final child's PID`).
 */
import { readFileSync } from "node:fs";

const CAP_SYS_RESOURCE = 24n;

/** -1000 when the effective capabilities in `status` (/proc/self/status) hold CAP_SYS_RESOURCE, else 0. */
export function lowestOomScoreAdj(status = readStatus()): number {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  if (effective === undefined) return 0;
  return (BigInt(`0x${effective}`) >> CAP_SYS_RESOURCE) & 1n ? -1000 : 0;
}

function readStatus(): string {
  try {
    return readFileSync("/proc/self/status", "utf8");
  } catch {
    return "";
  }
}
