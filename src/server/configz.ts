/**
 * `/configz`: the agent's settings as the kubelet reports its KubeletConfiguration, in its field
 * names and value syntax (Go durations, quantities), and only the settings this agent really has.
 */
import type { ListenAddress } from "../api/http/server.ts";
import { formatEvictionHard } from "../eviction/thresholds.ts";
import { formatReserved, type NodeReservations } from "../eviction/node-allocatable.ts";
import type { ContainerLogPolicy } from "../runtime/log-rotation-policy.ts";
import { goDuration } from "../printers/go-duration.ts";

export interface AgentSettings {
  /** The manifest directory, absolute. */
  staticPodPath: string;
  /** How often the directory is rescanned in full. */
  fileCheckFrequencyMs: number;
  /** The restart back-off's cap. */
  maxContainerRestartPeriodMs: number;
  logPolicy: ContainerLogPolicy;
  podPidsLimit: number | undefined;
  reservations: NodeReservations;
  maxPods: number;
  /** Where the kubelet's server listens (`--kubelet-listen`). */
  listen: ListenAddress;
}

/** The body of `/configz`. */
export function kubeletConfigz(settings: AgentSettings): { kubeletconfig: Record<string, unknown> } {
  return {
    kubeletconfig: {
      enableServer: true,
      staticPodPath: settings.staticPodPath,
      fileCheckFrequency: goDuration(settings.fileCheckFrequencyMs),
      address: settings.listen.hostname,
      port: settings.listen.port,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
      authorization: { mode: "AlwaysAllow" },
      maxPods: settings.maxPods,
      ...(settings.podPidsLimit !== undefined && { podPidsLimit: settings.podPidsLimit }),
      evictionHard: pairs(formatEvictionHard(settings.reservations.evictionHard), "<"),
      systemReserved: pairs(formatReserved(settings.reservations.systemReserved), "="),
      kubeReserved: pairs(formatReserved(settings.reservations.kubeReserved), "="),
      containerLogMaxSize: binaryQuantity(settings.logPolicy.maxBytes),
      containerLogMaxFiles: settings.logPolicy.maxFiles,
      crashLoopBackOff: { maxContainerRestartPeriod: goDuration(settings.maxContainerRestartPeriodMs) },
    },
  };
}

/** `memory.available<100Mi,nodefs.available<10%` (or `cpu=500m,memory=1Gi`) as the map the config holds. */
function pairs(flag: string, separator: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const part of flag.split(",").filter(Boolean)) {
    const at = part.indexOf(separator);
    map[part.slice(0, at)] = part.slice(at + 1);
  }
  return map;
}

function binaryQuantity(bytes: number): string {
  for (const [suffix, size] of [["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]] as const) {
    if (bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}
