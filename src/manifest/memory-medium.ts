/**
 * How big a memory-backed emptyDir's tmpfs is (the kubelet's calculateEmptyDirMemorySize, with
 * SizeMemoryBackedVolumes on since 1.22): the pod's memory limit, or the sizeLimit when that is
 * smaller. A pod without a memory limit on every container has none: the tmpfs then takes its
 * sizeLimit, or the kernel's default (half the host's memory), where the kubelet would use the
 * node's allocatable.
 */
import { parseQuantity } from "./quantity.ts";
import type { PodSpec, Volume } from "./types.ts";

type EmptyDir = Extract<Volume, { type: "emptyDir" }>;

/** The tmpfs size in bytes; undefined leaves the kernel's default. */
export function memoryMediumSizeBytes(pod: PodSpec, volume: EmptyDir): number | undefined {
  const podLimit = podMemoryLimitBytes(pod);
  if (volume.sizeLimitBytes === undefined) return podLimit;
  return podLimit === undefined ? volume.sizeLimitBytes : Math.min(podLimit, volume.sizeLimitBytes);
}

/** The pod's effective memory limit: its app containers' sum, or the largest init container's if more. */
function podMemoryLimitBytes(pod: PodSpec): number | undefined {
  const limitOf = (container: PodSpec["containers"][number]) => {
    const memory = container.resources?.limits.memory;
    return memory === undefined ? undefined : Number(parseQuantity(memory).value());
  };
  const apps = pod.containers.map(limitOf);
  if (apps.length === 0 || apps.some((limit) => limit === undefined)) return undefined;
  const inits = pod.initContainers.map(limitOf);
  if (inits.some((limit) => limit === undefined)) return undefined;
  const sum = (apps as number[]).reduce((a, b) => a + b, 0);
  return Math.max(sum, ...(inits as number[]));
}
