/**
 * The stats/v1alpha1 Summary (what a kubelet serves at /stats/summary) drawn from the collector's
 * readings: the node, then each pod with a running container measured, its containers, and its
 * pod-level sums (no pod cgroup here: a pod's usage is its containers'). Times are metav1.Time, to
 * the second; a figure not read is left out, as the kubelet leaves out a nil pointer.
 */
import type { ContainerUsage } from "../runtime/runtime.ts";
import type { V1Pod } from "../v1/v1.ts";
import { isoTime } from "../v1/time.ts";
import type { FsFigures, NodeReading } from "./node-usage.ts";
import { nanoCores, type ContainerRef, type ContainerSamples, type Pair, type SampleSet, type VolumeSample } from "./samples.ts";

export interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface SwapStats {
  time: string;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  swap?: SwapStats;
  rootfs?: FsStats;
  logs?: FsStats;
}

export interface VolumeStats extends FsStats {
  name: string;
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime: string;
  containers: ContainerStats[];
  cpu?: CpuStats;
  memory?: MemoryStats;
  swap?: SwapStats;
  volume?: VolumeStats[];
  "ephemeral-storage"?: FsStats;
}

export interface Summary {
  node: {
    nodeName: string;
    startTime: string;
    cpu?: CpuStats;
    memory?: MemoryStats;
    swap?: SwapStats;
    fs?: FsStats;
    runtime?: { imageFs?: FsStats };
    rlimit?: { time: string; maxpid?: number; curproc?: number };
  };
  pods: PodStats[];
}

/** The running containers of a served pod (init, sidecar and app), with the runtime id of each. */
export function runningContainers(pod: V1Pod): ContainerRef[] {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return statuses.flatMap((status) => {
    const running = status.state?.running;
    const id = status.containerID?.split("://")[1];
    if (!running || !id) return [];
    return [{ podUid: pod.metadata.uid ?? "", podName: pod.metadata.name ?? "", namespace: pod.metadata.namespace ?? "default", name: status.name, id, startedAt: Date.parse(running.startedAt ?? "") || 0 }];
  });
}

export function buildSummary(nodeName: string, samples: SampleSet, pods: V1Pod[]): Summary {
  const nodeFs = samples.node?.last.fs;
  const byPod = new Map<string, ContainerSamples[]>();
  for (const container of samples.containers.values()) {
    const list = byPod.get(container.ref.podUid) ?? [];
    list.push(container);
    byPod.set(container.ref.podUid, list);
  }
  const podStats = pods.flatMap((pod) => {
    const containers = byPod.get(pod.metadata.uid ?? "");
    const volumes = [...samples.volumes.values()].filter((volume) => volume.podUid === pod.metadata.uid);
    return containers ? [podSummary(pod, containers, volumes, nodeFs)] : [];
  });
  return { node: nodeSummary(nodeName, samples.node), pods: podStats };
}

function nodeSummary(nodeName: string, node: Pair<NodeReading> | undefined): Summary["node"] {
  if (!node) return { nodeName, startTime: isoTime(0) };
  const { last } = node;
  const time = isoTime(last.at);
  const cpu = cpuStats(node);
  return {
    nodeName,
    startTime: isoTime(last.bootAt ?? 0),
    ...(cpu && { cpu }),
    ...(last.memory && { memory: { time, ...last.memory } }),
    ...(last.swap && { swap: { time, swapAvailableBytes: last.swap.availableBytes, swapUsageBytes: last.swap.usageBytes } }),
    ...(last.fs && { fs: { time, ...fsStats(last.fs, last.fs.usedBytes), inodesUsed: last.fs.inodesUsed } }),
    ...(last.imageFs && { runtime: { imageFs: { time, ...imageFs(last.imageFs) } } }),
    ...(last.rlimit && { rlimit: { time, ...(last.rlimit.maxPid !== undefined && { maxpid: last.rlimit.maxPid }), ...(last.rlimit.processes !== undefined && { curproc: last.rlimit.processes }) } }),
  };
}

function podSummary(pod: V1Pod, samples: ContainerSamples[], volumes: VolumeSample[], nodeFs: FsFigures | undefined): PodStats {
  const containers = samples.map((container) => containerSummary(container, nodeFs));
  const time = isoTime(Math.max(...samples.map((sample) => sample.last.at)));
  const cpuTimes = samples.map((sample) => sample.last.cpuUsageCoreNanoSeconds);
  const rates = samples.map((sample) => nanoCores(sample));
  const memories = samples.map((sample) => sample.last.memory);
  // The kubelet's ephemeral storage: the containers' writable layers and logs, and the disk-backed emptyDirs.
  const used =
    samples.reduce((sum, sample) => sum + (sample.last.rootfsUsedBytes ?? 0) + (sample.last.logsUsedBytes ?? 0), 0) +
    volumes.reduce((sum, volume) => sum + (volume.memory ? 0 : volume.usedBytes), 0);
  const ref = samples[0]!.ref;
  return {
    podRef: { name: ref.podName, namespace: ref.namespace, uid: ref.podUid },
    startTime: pod.status?.startTime ?? isoTime(Math.min(...samples.map((sample) => sample.ref.startedAt))),
    containers,
    ...(cpuTimes.every((value) => value !== undefined) && {
      cpu: { time, ...(rates.every((rate) => rate !== undefined) && { usageNanoCores: sum(rates as number[]) }), usageCoreNanoSeconds: sum(cpuTimes as number[]) },
    }),
    ...(memories.every((memory) => memory !== undefined) && {
      memory: { time, usageBytes: sum(memories.map((m) => m!.usageBytes)), workingSetBytes: sum(memories.map((m) => m!.workingSetBytes)), rssBytes: sum(memories.map((m) => m!.rssBytes ?? 0)) },
    }),
    ...(samples.every((sample) => sample.last.swap) && { swap: { time, swapUsageBytes: sum(samples.map((sample) => sample.last.swap!.usageBytes)) } }),
    ...(volumes.length > 0 && {
      volume: volumes.map((volume) => ({
        time: isoTime(volume.at),
        availableBytes: volume.availableBytes,
        capacityBytes: volume.capacityBytes,
        usedBytes: volume.usedBytes,
        inodesFree: volume.inodesFree,
        inodes: volume.inodes,
        inodesUsed: volume.inodesUsed,
        name: volume.name,
      })),
    }),
    "ephemeral-storage": { time, ...fsStats(nodeFs, used) },
  };
}

function containerSummary(container: ContainerSamples, nodeFs: FsFigures | undefined): ContainerStats {
  const { last } = container;
  const time = isoTime(last.at);
  const cpu = cpuStats(container);
  return {
    name: container.ref.name,
    startTime: isoTime(container.ref.startedAt),
    ...(cpu && { cpu }),
    ...(last.memory && { memory: memoryStats(time, last.memory) }),
    ...(last.swap && { swap: { time, ...(last.swap.availableBytes !== undefined && { swapAvailableBytes: last.swap.availableBytes }), swapUsageBytes: last.swap.usageBytes } }),
    ...(last.rootfsUsedBytes !== undefined && { rootfs: { time, ...fsStats(nodeFs, last.rootfsUsedBytes) } }),
    ...(last.logsUsedBytes !== undefined && { logs: { time, ...fsStats(nodeFs, last.logsUsedBytes) } }),
  };
}

function cpuStats(pair: Pair<{ at: number; cpuUsageCoreNanoSeconds?: number }>): CpuStats | undefined {
  const total = pair.last.cpuUsageCoreNanoSeconds;
  if (total === undefined) return undefined;
  const rate = nanoCores(pair);
  return { time: isoTime(pair.last.at), ...(rate !== undefined && { usageNanoCores: rate }), usageCoreNanoSeconds: total };
}

/** availableBytes is the limit less the working set, and absent without a limit (the kubelet's rule). */
function memoryStats(time: string, memory: NonNullable<ContainerUsage["memory"]>): MemoryStats {
  const { limitBytes, ...figures } = memory;
  return { time, ...(limitBytes !== undefined && { availableBytes: Math.max(0, limitBytes - memory.workingSetBytes) }), ...figures };
}

/** The engine's root may be unreadable (no statfs): then only the images' bytes are known. */
function imageFs({ usedBytes, fs }: NonNullable<NodeReading["imageFs"]>): Omit<FsStats, "time"> {
  if (!fs) return { usedBytes };
  return { availableBytes: fs.availableBytes, capacityBytes: fs.capacityBytes, usedBytes, inodesFree: fs.inodesFree, inodes: fs.inodes, inodesUsed: fs.inodesUsed };
}

/** A share of a filesystem: the filesystem's capacity and free space, with the bytes this thing uses. */
function fsStats(fs: FsFigures | undefined, usedBytes: number): Omit<FsStats, "time"> {
  if (!fs) return { usedBytes };
  return { availableBytes: fs.availableBytes, capacityBytes: fs.capacityBytes, usedBytes, inodesFree: fs.inodesFree, inodes: fs.inodes };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
