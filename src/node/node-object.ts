/**
 * The one drawing of this host as a v1 Node, as the kubelet would register it: the local API serves
 * it, and node mode registers it with the cluster and reports its status from it. Capacity and pressure come from
 * the host itself (CPUs, /proc/meminfo, the filesystem holding the pods' files, the PID space), read
 * by `readHostFacts`; allocatable and DiskPressure follow what the agent recorded (its flags, its
 * monitor's verdict). `nodeObject` is pure, so thresholds and conditions are tested with any facts.
 */
import { readFileSync } from "node:fs";
import { arch, hostname, platform, release } from "node:os";
import { isoTime } from "../v1/time.ts";
import { KUBELET_VERSION, VERSION } from "../version.ts";
import { MAX_PODS, nodeAllocatable, readHostCapacity, type HostCapacity, type NodeReservations } from "../eviction/node-allocatable.ts";
import { thresholdBytes } from "../eviction/thresholds.ts";
import { realStatfs } from "../eviction/disk-pressure.ts";
import { runtimeRootOf } from "../store/db-path.ts";
import type { PlegHealth } from "../pleg/pleg.ts";

export interface HostFacts extends HostCapacity {
  memoryAvailableKi: number;
  /** Free space (for unprivileged writers) on the filesystem of ephemeralStorageBytes, the kubelet's nodefs. */
  diskAvailableBytes: bigint;
  pidMax: number;
  processes: number;
  hostname: string;
  kernelVersion: string;
  osImage: string;
  operatingSystem: string;
  architecture: string;
  machineID: string;
  /** The firmware's UUID (/sys/class/dmi/id/product_uuid, readable by root only); "" when unreadable. */
  systemUUID: string;
  bootID: string;
}

export interface NodeAddress {
  type: "InternalIP" | "ExternalIP" | "Hostname" | "InternalDNS" | "ExternalDNS";
  address: string;
}

/** The kubelet has no default PID threshold; a host with under 10% of pid_max free is under PID pressure here. */
export const PID_AVAILABLE_MIN_FRACTION = 0.1;

/** What the node's Ready condition says about the agent. */
export type AgentLiveness = "running" | "not-serving";

export interface NodeOptions {
  name: string;
  uid: string;
  createdAt: number;
  /** When the node status was last known good: now under `run`, the last checkpoint under `serve`. */
  heartbeatAt: number;
  liveness: AgentLiveness;
  containerRuntimeVersion: string;
  /** The agent's --eviction-hard, --system-reserved and --kube-reserved. */
  reservations: NodeReservations;
  /** DiskPressure as the agent's monitor decided it; without it (no agent recorded one), read from the facts. */
  diskPressure?: { pressure: boolean; since: number };
  /** `run --max-pods`; default MAX_PODS. */
  maxPods?: number;
  /** The agent's PLEG health (under `run`): unhealthy, the node is not Ready, as the kubelet reports it. */
  pleg?: PlegHealth;
  /** The port the kubelet's own server listens on (`run --kubelet-listen`); 0 while none does. */
  kubeletPort?: number;
  /** `status.addresses`; default InternalIP 127.0.0.1 and the host's name. */
  addresses?: NodeAddress[];
}

export function readHostFacts(dbPath: string): HostFacts {
  const meminfo = parseMeminfo(readText("/proc/meminfo"));
  // The pods' files are under the runtime root (or will be: statfs reads the nearest existing parent).
  const podsDir = runtimeRootOf(dbPath);
  const loadavg = readText("/proc/loadavg").split(/\s+/)[3] ?? "";
  return {
    // The same reading admission uses, so the node object's allocatable is what pods are admitted against.
    ...readHostCapacity(podsDir),
    memoryAvailableKi: meminfo.MemAvailable ?? meminfo.MemFree ?? 0,
    diskAvailableBytes: availableBytes(podsDir),
    pidMax: Number(readText("/proc/sys/kernel/pid_max").trim()) || 32768,
    processes: Number(loadavg.split("/")[1]) || 0,
    ...machineFacts(),
  };
}

type MachineFacts = Pick<HostFacts, "hostname" | "kernelVersion" | "osImage" | "operatingSystem" | "architecture" | "machineID" | "systemUUID" | "bootID">;
let machine: MachineFacts | undefined;

/** What does not change while the agent runs (the kubelet reads its machine info once at start): read once, not every status round. */
function machineFacts(): MachineFacts {
  machine ??= {
    hostname: hostname(),
    kernelVersion: release(),
    osImage: osImage(readText("/etc/os-release")),
    operatingSystem: platform(),
    architecture: goArch(arch()),
    machineID: readText("/etc/machine-id").trim(),
    systemUUID: readText("/sys/class/dmi/id/product_uuid").trim(),
    bootID: readText("/proc/sys/kernel/random/boot_id").trim(),
  };
  return machine;
}

export function nodeObject(facts: HostFacts, options: NodeOptions): Record<string, unknown> {
  const heartbeat = isoTime(options.heartbeatAt);
  const since = isoTime(options.createdAt);
  const condition = (type: string, pressure: boolean, yes: [string, string], no: [string, string]) => {
    const [reason, message] = pressure ? yes : no;
    return { type, status: pressure ? "True" : "False", lastHeartbeatTime: heartbeat, lastTransitionTime: since, reason, message };
  };
  const { evictionHard } = options.reservations;
  const memoryPressure = BigInt(facts.memoryAvailableKi) * 1024n < thresholdBytes(evictionHard["memory.available"], BigInt(facts.memoryTotalKi) * 1024n);
  const diskPressure =
    options.diskPressure?.pressure ??
    (facts.ephemeralStorageBytes > 0n && facts.diskAvailableBytes < thresholdBytes(evictionHard["nodefs.available"], facts.ephemeralStorageBytes));
  const diskSince = isoTime(options.diskPressure?.since ?? options.createdAt);
  const pidPressure = facts.pidMax - facts.processes < facts.pidMax * PID_AVAILABLE_MIN_FRACTION;
  const readySince = options.pleg ? isoTime(options.pleg.since) : since;
  const ready =
    options.liveness !== "running"
      ? { type: "Ready", status: "Unknown", lastHeartbeatTime: heartbeat, lastTransitionTime: since, reason: "NodeStatusUnknown", message: "minikubelet serve reads the database only: whether an agent runs is not known." }
      : options.pleg && !options.pleg.healthy
        ? { type: "Ready", status: "False", lastHeartbeatTime: heartbeat, lastTransitionTime: readySince, reason: "KubeletNotReady", message: `PLEG is not healthy: ${options.pleg.message}` }
        : { type: "Ready", status: "True", lastHeartbeatTime: heartbeat, lastTransitionTime: readySince, reason: "KubeletReady", message: "kubelet is posting ready status" };
  const capacity = {
    cpu: String(facts.cpus),
    "ephemeral-storage": `${facts.ephemeralStorageBytes / 1024n}Ki`,
    memory: `${facts.memoryTotalKi}Ki`,
    pods: String(options.maxPods ?? MAX_PODS),
  };
  // Capacity less the reservations and the hard eviction thresholds, as the kubelet reports it.
  const admitted = nodeAllocatable(facts, options.reservations, options.maxPods);
  const allocatable = {
    cpu: admitted.cpuMillis % 1000n === 0n ? `${admitted.cpuMillis / 1000n}` : `${admitted.cpuMillis}m`,
    "ephemeral-storage": String(admitted.ephemeralStorageBytes),
    memory: `${admitted.memoryBytes / 1024n}Ki`,
    pods: String(admitted.pods),
  };
  return {
    kind: "Node",
    apiVersion: "v1",
    metadata: {
      name: options.name,
      uid: options.uid,
      creationTimestamp: since,
      labels: {
        "beta.kubernetes.io/arch": facts.architecture,
        "beta.kubernetes.io/os": facts.operatingSystem,
        "kubernetes.io/arch": facts.architecture,
        "kubernetes.io/hostname": options.name,
        "kubernetes.io/os": facts.operatingSystem,
      },
    },
    // The taint the node lifecycle controller puts on a node with DiskPressure (TaintNodesByCondition).
    spec: diskPressure ? { taints: [{ key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule", timeAdded: diskSince }] } : {},
    status: {
      capacity,
      allocatable,
      conditions: [
        condition("MemoryPressure", memoryPressure, ["KubeletHasInsufficientMemory", "kubelet has insufficient memory available"], ["KubeletHasSufficientMemory", "kubelet has sufficient memory available"]),
        {
          ...condition("DiskPressure", diskPressure, ["KubeletHasDiskPressure", "kubelet has disk pressure"], ["KubeletHasNoDiskPressure", "kubelet has no disk pressure"]),
          lastTransitionTime: diskSince,
        },
        condition("PIDPressure", pidPressure, ["KubeletHasInsufficientPID", "kubelet has insufficient PID available"], ["KubeletHasSufficientPID", "kubelet has sufficient PID available"]),
        ready,
      ],
      addresses: options.addresses ?? [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: facts.hostname },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: options.kubeletPort ?? 0 } },
      nodeInfo: {
        machineID: facts.machineID,
        systemUUID: facts.systemUUID,
        bootID: facts.bootID,
        kernelVersion: facts.kernelVersion,
        osImage: facts.osImage,
        containerRuntimeVersion: options.containerRuntimeVersion,
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: "",
        operatingSystem: facts.operatingSystem,
        architecture: facts.architecture,
      },
    },
  };
}

/**
 * `nodeInfo.containerRuntimeVersion` as the kubelet words it (`<runtime name>://<runtime version>`):
 * the process runtime's version is minikubelet's own; an engine's is what it said (Runtime.version),
 * `unknown` until it has.
 */
export function containerRuntimeVersion(runtimeName: string, engineVersion?: string): string {
  if (runtimeName === "process") return `process://minikubelet-${VERSION}`;
  return `${runtimeName}://${engineVersion ?? "unknown"}`;
}

function availableBytes(path: string): bigint {
  try {
    return realStatfs(path).availableBytes;
  } catch {
    return 0n;
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** /proc/meminfo's `Name: 123 kB` lines, in KiB. */
export function parseMeminfo(text: string): Record<string, number> {
  const values: Record<string, number> = {};
  for (const match of text.matchAll(/^(\w+):\s+(\d+)/gm)) values[match[1]!] = Number(match[2]);
  return values;
}

/** /etc/os-release's PRETTY_NAME, as the kubelet reports osImage. */
export function osImage(text: string): string {
  const match = /^PRETTY_NAME=(.*)$/m.exec(text);
  return match ? match[1]!.trim().replace(/^["']|["']$/g, "") : "Unknown";
}

function goArch(nodeArch: string): string {
  return ({ x64: "amd64", ia32: "386", arm: "arm" } as Record<string, string>)[nodeArch] ?? nodeArch;
}
