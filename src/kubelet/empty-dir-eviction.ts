/**
 * The loop's side of evicting a pod whose emptyDir outgrew its sizeLimit: eviction/ measures and
 * decides (local-storage.ts, pod-eviction.ts: the message, the grace, which pods are critical), and
 * this carries it out as the kubelet's killPodFunc does for its eviction manager (emptyDirLimitEviction,
 * evictPod): a Warning `Evicted` event with the kubelet's message, the pod Failed with reason Evicted
 * at once, its containers stopped with the immediate-eviction grace (the 2 s floor applies), nothing
 * restarted. Static pods are critical and never evicted, as in the kubelet; the agent says so once per pod.
 */
import { LocalStorageMonitor, type LimitedVolume } from "../eviction/local-storage.ts";
import type { MeasureDir } from "../eviction/dir-usage.ts";
import { EMPTY_DIR_LIMIT_SIGNAL, emptyDirEvictionMessage, IMMEDIATE_EVICTION_GRACE_MS, isCriticalPod } from "../eviction/pod-eviction.ts";
import type { KubeletMetricsRecorder } from "../stats/kubelet-metrics.ts";
import type { PodKey } from "../manifest/types.ts";
import { isTerminalPhase } from "./status/phase.ts";
import type { PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

/** The static pod test of isCriticalPod, on the loop's record of a pod. */
function isCritical(pod: PodRecord): boolean {
  return isCriticalPod({ isStatic: !pod.spec.api, spec: (pod.spec.manifest.spec ?? {}) as Record<string, unknown> });
}

/** What the loop gives the eviction check: its pods, the runtime's volume paths, its context. */
export interface EmptyDirEvictionOptions {
  ctx: SyncContext;
  pods: ReadonlyMap<PodKey, PodRecord>;
  /** Where the runtime keeps a pod's emptyDir on the host; undefined where it cannot be measured. */
  volumePath: (pod: PodRecord, volume: string) => string | undefined;
  measure: MeasureDir;
  periodMs?: number;
  metrics?: Pick<KubeletMetricsRecorder, "podEvicted">;
}

/** The check, started and stopped with the loop; `check()` is one measuring round (tests call it). */
export function emptyDirEviction(options: EmptyDirEvictionOptions): LocalStorageMonitor {
  const { ctx, pods } = options;
  const refusedCritical = new Set<string>();
  return new LocalStorageMonitor({
    clock: ctx.clock,
    periodMs: options.periodMs,
    measure: options.measure,
    volumes: () => {
      // Said once per pod while it lives: the set never outgrows the pods.
      const live = new Set([...pods.values()].map((pod) => pod.spec.uid));
      for (const uid of refusedCritical) if (!live.has(uid)) refusedCritical.delete(uid);
      return limitedVolumes(pods, options.volumePath);
    },
    onExceeded: (volume) => {
      const pod = pods.get(volume.podKey);
      if (!pod || !isEvictable(pod)) return;
      if (isCritical(pod)) {
        if (!refusedCritical.has(pod.spec.uid)) ctx.log(`eviction manager: cannot evict a critical pod ${pod.spec.namespace}/${pod.spec.fullName} (static pod): ${emptyDirEvictionMessage(volume.volume, volume.limit)}`);
        refusedCritical.add(pod.spec.uid);
        return;
      }
      const message = emptyDirEvictionMessage(volume.volume, volume.limit);
      pod.evicted = { message };
      options.metrics?.podEvicted(EMPTY_DIR_LIMIT_SIGNAL);
      ctx.event(pod, "Warning", "Evicted", undefined, message);
      ctx.requestSync(pod);
    },
    onError: (volume, error) => ctx.log(`measuring emptyDir ${volume.volume} of ${volume.podKey}: ${error.message}`),
  });
}

function isEvictable(pod: PodRecord): boolean {
  return !pod.evicted && !pod.rejected && !pod.waitingForNode && pod.deletionRequestedAt === undefined && !isTerminalPhase(pod.phase) && pod.sandbox !== undefined;
}

function limitedVolumes(pods: ReadonlyMap<PodKey, PodRecord>, volumePath: EmptyDirEvictionOptions["volumePath"]): LimitedVolume[] {
  const volumes: LimitedVolume[] = [];
  for (const pod of pods.values()) {
    if (!isEvictable(pod)) continue;
    for (const volume of pod.spec.volumes) {
      if (volume.type !== "emptyDir" || volume.sizeLimitBytes === undefined || volume.sizeLimit === undefined) continue;
      const path = volumePath(pod, volume.name);
      if (path) volumes.push({ podKey: pod.spec.key, volume: volume.name, path, limitBytes: volume.sizeLimitBytes, limit: volume.sizeLimit });
    }
  }
  return volumes;
}
