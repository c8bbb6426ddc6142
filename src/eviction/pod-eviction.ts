/**
 * What the eviction manager decides about a pod, as the kubelet's eviction package does: the
 * signal, the message, the grace an evicted pod's containers get, and which pods are too critical
 * to evict. The loop carries a decision out (kubelet/empty-dir-eviction.ts: the pod Failed with
 * reason Evicted, its containers stopped, the event), as the kubelet's killPodFunc does for the
 * eviction manager; nothing here stops a container.
 */

/** The kubelet's eviction signal for an emptyDir past its sizeLimit (SignalEmptyDirFsLimit). */
export const EMPTY_DIR_LIMIT_SIGNAL = "emptydirfs.limit";

/** immediateEvictionGracePeriodSeconds: how long an evicted pod's containers get. */
export const IMMEDIATE_EVICTION_GRACE_MS = 1000;

/** priorityClassNames the API server's priority admission makes critical (2000000000 and up). */
const CRITICAL_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"];
const CRITICAL_PRIORITY = 2_000_000_000;

export function emptyDirEvictionMessage(volume: string, limit: string): string {
  return `Usage of EmptyDir volume ${JSON.stringify(volume)} exceeds the limit ${JSON.stringify(limit)}. `;
}

/** kubelettypes.IsCriticalPod: a static pod (a file's), or one of critical priority. */
export function isCriticalPod(pod: { isStatic: boolean; spec: { priorityClassName?: unknown; priority?: unknown } }): boolean {
  if (pod.isStatic) return true;
  const { priorityClassName, priority } = pod.spec;
  if (typeof priorityClassName === "string" && CRITICAL_PRIORITY_CLASSES.includes(priorityClassName)) return true;
  return typeof priority === "number" && priority >= CRITICAL_PRIORITY;
}
