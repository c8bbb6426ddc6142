/**
 * A pod updated in place: the same pod object (same uid) with a new spec, as the kubelet's apiserver
 * source delivers an update. Like the kubelet, which compares each running container's hash with
 * its spec's, a container whose definition changed is killed (`Container NAME definition changed,
 * will be restarted`) and started again with the new definition, whatever the restart policy and
 * without a back-off wait (the kubelet's back-off key includes the hash); new resources are a
 * resize (pod-resize.ts), labels and annotations restart nothing, and an ephemeral container added (`kubectl debug`) is started beside the others.
 * A file pod never comes here: an edited file has a new uid, so it is a new pod, as for a static pod.
 * The kill and the forgotten back-off are the plan's (compute-pod-actions.ts).
 */
import { canonicalJson } from "../manifest/hash.ts";
import type { ContainerSpec, PodSpec } from "../manifest/types.ts";
import { allContainers, newContainerRecord, type PodRecord } from "./pod-state.ts";

/**
 * The containers whose definitions differ in `next`, when `next` can replace `current` in place:
 * same uid, same containers by name and order, and nothing else changed but labels and annotations
 * (what the API lets change beside images, and activeDeadlineSeconds, which the next pass reads).
 * Undefined when the pod must be replaced instead.
 */
export function inPlaceChanges(current: PodSpec, next: PodSpec): string[] | undefined {
  if (current.uid !== next.uid) return undefined;
  if (podShape(current) !== podShape(next)) return undefined;
  const pairs = [...current.initContainers.map((c, i) => [c, next.initContainers[i]!] as const), ...current.containers.map((c, i) => [c, next.containers[i]!] as const)];
  return pairs.filter(([before, after]) => containerHash(before) !== containerHash(after)).map(([before]) => before.name);
}

/**
 * The pod without what an in-place update may change: containers by name only, ephemeral ones not
 * at all, the active deadline, and the pod-level resources (a pod-level resize, which this agent
 * does not enforce as a pod cgroup, so there is nothing to apply).
 */
function podShape(spec: PodSpec): string {
  const names = (containers: ContainerSpec[]) => containers.map((c) => c.name);
  return canonicalJson({
    ...spec,
    configHash: "",
    labels: {},
    annotations: {},
    manifest: {},
    activeDeadlineSeconds: undefined,
    resources: undefined,
    initContainers: names(spec.initContainers),
    containers: names(spec.containers),
    ephemeralContainers: [],
  });
}

/**
 * Stands for the kubelet's container hash: any change to the definition is a change, but for its
 * resources, which an in-place resize applies (pod-resize.ts) without replacing the container.
 */
function containerHash(container: ContainerSpec): string {
  const { resources: _resized, ...definition } = container;
  return canonicalJson(definition);
}

/**
 * Takes `next` as the pod's spec and marks the changed containers for a restart. A regular init
 * container that already ran is not run again (the kubelet does not either); the new definition
 * is what it would run with.
 */
export function applyInPlaceUpdate(pod: PodRecord, next: PodSpec, changed: readonly string[]): void {
  pod.spec = next;
  // An ephemeral container is never changed or removed once added (the API refuses it): new names are new containers.
  pod.ephemeral ??= [];
  for (const spec of next.ephemeralContainers ?? []) {
    if (!pod.ephemeral.some((c) => c.name === spec.name)) pod.ephemeral.push(newContainerRecord(spec, "ephemeral", pod.spec.initContainers.length > 0));
  }
  for (const container of allContainers(pod)) {
    const spec = [...next.initContainers, ...next.containers].find((c) => c.name === container.name);
    if (!spec) continue;
    container.spec = spec;
    if (changed.includes(container.name) && container.kind !== "init") container.definitionChanged = true;
  }
}
