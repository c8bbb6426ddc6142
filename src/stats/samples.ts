/**
 * The last two readings of each thing measured, which is all a rate needs: cadvisor keeps a short
 * history per container for the same reason. Each sampling round replaces the whole set, so a
 * container that is gone is forgotten at the next round and memory stays bounded by what runs.
 */
import type { ContainerUsage } from "../runtime/runtime.ts";
import type { NodeReading } from "./node-usage.ts";
import type { VolumeReading } from "./volume-usage.ts";

/** Who a container's readings belong to, from the served pod. */
export interface ContainerRef {
  podUid: string;
  podName: string;
  namespace: string;
  name: string;
  /** The runtime's id: a restart is a new id, so two readings of one id are of one attempt. */
  id: string;
  startedAt: number;
}

export interface Pair<T extends { at: number }> {
  last: T;
  /** The reading before `last`, when there was one. */
  prev?: T;
}

/** Pairs `next` with the last reading of the same thing: the old last becomes prev when it is older. */
export function advance<T extends { at: number }>(old: Pair<T> | undefined, next: T): Pair<T> {
  if (!old) return { last: next };
  if (next.at > old.last.at) return { last: next, prev: old.last };
  return old;
}

/** Nanocores over the pair, metrics-server's rate: undefined without two readings or when the counter went back. */
export function nanoCores(pair: Pair<{ at: number; cpuUsageCoreNanoSeconds?: number }>): number | undefined {
  const { last, prev } = pair;
  if (!prev || last.cpuUsageCoreNanoSeconds === undefined || prev.cpuUsageCoreNanoSeconds === undefined) return undefined;
  const used = last.cpuUsageCoreNanoSeconds - prev.cpuUsageCoreNanoSeconds;
  const seconds = (last.at - prev.at) / 1000;
  if (used < 0 || seconds <= 0) return undefined;
  return Math.round(used / seconds);
}

export interface ContainerSamples extends Pair<ContainerUsage> {
  ref: ContainerRef;
}

/** An emptyDir volume of a pod with a running container, as last walked. */
export interface VolumeSample extends VolumeReading {
  podUid: string;
  name: string;
  /** `medium: Memory`: its bytes are memory, not ephemeral storage. */
  memory: boolean;
}

/** One round's view: the node, every running container measured, their pods' emptyDir volumes. */
export interface SampleSet {
  node?: Pair<NodeReading>;
  containers: Map<string, ContainerSamples>;
  /** By `podUid/volume`. */
  volumes: Map<string, VolumeSample>;
  /** The round's failure, for resource_scrape_error; undefined when it read everything it tried. */
  error?: string;
}
