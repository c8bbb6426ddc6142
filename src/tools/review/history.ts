/**
 * What happened to a pod's containers, from `kubectl describe pod` text or from our database: the
 * evidence a review finding can cite. Both sources are reduced to this one shape.
 */
import type { ProbeKind } from "../../manifest/types.ts";

export interface ContainerHistory {
  restartCount: number;
  livenessKills: number;
  startupKills: number;
  /** `Unhealthy` events per probe kind (an event's repeat count included). */
  unhealthy: Partial<Record<ProbeKind, number>>;
  /** How long each attempt a probe killed had been running, in seconds (what the source knows of them). */
  killedAfterSeconds: number[];
}

/** By container name. */
export type PodHistory = Map<string, ContainerHistory>;

export function emptyHistory(): ContainerHistory {
  return { restartCount: 0, livenessKills: 0, startupKills: 0, unhealthy: {}, killedAfterSeconds: [] };
}

/** "each kill came 31 s after start", "kills came 29 to 33 s after start", or of the one kill a source knows. */
export function describeKillTimes(seconds: readonly number[]): string | undefined {
  if (seconds.length === 0) return undefined;
  const low = Math.min(...seconds);
  const high = Math.max(...seconds);
  if (seconds.length === 1) return `the last kill came ${low} s after start`;
  return low === high ? `each kill came ${low} s after start` : `kills came ${low} to ${high} s after start`;
}

export function times(count: number): string {
  return count === 1 ? "once" : `${count} times`;
}

/** The lines that back a finding about `probe` in this container. */
export function probeEvidence(history: ContainerHistory | undefined, probe: ProbeKind): string[] {
  if (!history) return [];
  const lines: string[] = [];
  const failed = history.unhealthy[probe] ?? 0;
  if (probe === "liveness" && history.livenessKills > 0) {
    const when = describeKillTimes(history.killedAfterSeconds);
    lines.push(`liveness killed it ${times(history.livenessKills)}${when ? `; ${when}` : ""}`);
  } else if (probe === "startup" && history.startupKills > 0) {
    lines.push(`the startup probe killed it ${times(history.startupKills)}`);
  }
  if (failed > 0) lines.push(`${probe} probe failed ${times(failed)} (Unhealthy events)`);
  if (history.restartCount > 0 && lines.length > 0) lines.push(`restart count ${history.restartCount}`);
  return lines;
}
