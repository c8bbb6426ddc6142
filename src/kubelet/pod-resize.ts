/**
 * In-place resize of container resources (KEP-1287, GA in 1.35), as the kubelet's allocation
 * manager and computePodResizeAction do it. Three values per container:
 *
 * - desired: the spec's resources, which the `resize` subresource changes;
 * - allocated: what the node accepted. A new pod is allocated its spec; a resize is accepted when
 *   the pod's new requests fit beside the other pods' allocations (the admission check), else it
 *   waits as PodResizePending, Deferred (or Infeasible), and is tried again on later walks;
 * - actuated: what the running attempt was given. An accepted resize is applied to each running
 *   container (PodResizeInProgress meanwhile): in place, or by a restart where the container's
 *   resizePolicy says RestartContainer for a resource that changed. A new attempt starts with its
 *   allocation.
 *
 * Only cpu and memory resize (the values the kubelet compares: requests and limits of each). The
 * record keeps what differs from the spec only: `PodRecord.allocation` while a resize waits,
 * `actuated` on a container until its new values are applied.
 */
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../manifest/types.ts";
import { parseQuantity } from "../manifest/quantity.ts";
import { allContainers, type ContainerRecord, type PodRecord, type ResizePendingReason } from "./pod-state.ts";

/** What a container's allocation was before a spec update, by name (undefined: no resources). */
export type Allocation = Map<string, ResourceRequirements | undefined>;

const RESIZED = ["cpu", "memory"] as const;
type Resized = (typeof RESIZED)[number];

/** The four values the kubelet compares (containerResourcesFromRequirements): milli-cpu and bytes, 0 when unset. */
function resizedValues(resources: ResourceRequirements | undefined): string {
  const value = (quantity: string | undefined, resource: Resized) =>
    quantity === undefined ? 0n : resource === "cpu" ? parseQuantity(quantity).milliValue() : parseQuantity(quantity).value();
  return RESIZED.map((r) => `${value(resources?.requests[r], r)}/${value(resources?.limits[r], r)}`).join(" ");
}

export function sameResizedValues(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean {
  return resizedValues(a) === resizedValues(b);
}

/** The resources the node allocated to a container: its spec's, unless a resize of it waits. */
export function allocatedResources(pod: PodRecord, container: Pick<ContainerRecord, "name" | "spec">): ResourceRequirements | undefined {
  const allocation = pod.allocation;
  if (allocation && container.name in allocation) return allocation[container.name] ?? undefined;
  return container.spec.resources;
}

/** The resources the running attempt has: its allocation, unless a resize is not applied to it yet. */
export function actuatedResources(pod: PodRecord, container: ContainerRecord): ResourceRequirements | undefined {
  return container.actuated !== undefined ? (container.actuated ?? undefined) : allocatedResources(pod, container);
}

/** Every container's allocation now, taken before a spec update replaces the specs. */
export function currentAllocation(pod: PodRecord): Allocation {
  return new Map(allContainers(pod).map((c) => [c.name, allocatedResources(pod, c)]));
}

/** The pod as the node allocated it: the spec, with each container's allocated resources (what admission counts). */
export function allocatedSpec(pod: PodRecord): Pick<PodSpec, "containers" | "initContainers" | "resources"> {
  if (!pod.allocation) return pod.spec;
  const allocated = (c: ContainerSpec): ContainerSpec => {
    if (!(c.name in pod.allocation!)) return c;
    const resources = pod.allocation![c.name];
    const { resources: _desired, ...rest } = c;
    return resources ? { ...rest, resources } : rest;
  };
  return { containers: pod.spec.containers.map(allocated), initContainers: pod.spec.initContainers.map(allocated), resources: pod.spec.resources };
}

/** Whether the spec asks for other cpu or memory than `before` allocated, for any container. */
export function resizeRequested(pod: PodRecord, before: Allocation): boolean {
  return [...pod.spec.initContainers, ...pod.spec.containers].some((c) => before.has(c.name) && !sameResizedValues(before.get(c.name), c.resources));
}

/**
 * The node takes the spec's resources: each running container keeps what it has (actuated) until
 * the resize is applied to it, and the pod's allocation is its spec again.
 */
export function acceptResize(pod: PodRecord, before: Allocation, now: number, generation: number | undefined): void {
  for (const c of allContainers(pod)) {
    if (c.state !== "running" || c.actuated !== undefined) continue;
    const had = before.get(c.name);
    if (!sameResizedValues(had, c.spec.resources)) c.actuated = had ?? null;
  }
  delete pod.allocation;
  const conditions = (pod.resize ??= {});
  delete conditions.pending;
  conditions.inProgress = { since: conditions.inProgress?.since ?? now, ...(generation !== undefined && { generation }) };
}

/**
 * The resize waits: the containers it changes keep their allocation. True when the condition is
 * new or says something new (the kubelet's SetPodResizePendingCondition, which an event follows).
 */
export function deferResize(pod: PodRecord, before: Allocation, refusal: { reason: ResizePendingReason; message: string }, now: number, generation: number | undefined): boolean {
  const allocation: Record<string, ResourceRequirements | null> = {};
  for (const c of [...pod.spec.initContainers, ...pod.spec.containers]) {
    if (before.has(c.name) && !sameResizedValues(before.get(c.name), c.resources)) allocation[c.name] = before.get(c.name) ?? null;
  }
  pod.allocation = allocation;
  const conditions = (pod.resize ??= {});
  const previous = conditions.pending;
  const changed = previous?.reason !== refusal.reason || previous.generation !== generation;
  conditions.pending = { ...refusal, since: previous?.since ?? now, ...(generation !== undefined && { generation }) };
  return changed;
}

/** The spec asks for what is allocated again: nothing waits any more. */
export function clearPendingResize(pod: PodRecord): void {
  delete pod.allocation;
  if (pod.resize) delete pod.resize.pending;
}

/** A running container whose resize is not applied yet: what it has and what it is to be given; undefined when none. */
export function pendingActuation(pod: PodRecord, container: ContainerRecord): { actuated: ResourceRequirements | undefined; target: ResourceRequirements | undefined } | undefined {
  if (container.state !== "running" || container.actuated === undefined) return undefined;
  const actuated = container.actuated ?? undefined;
  const target = allocatedResources(pod, container);
  return sameResizedValues(actuated, target) ? undefined : { actuated, target };
}

/** Whether applying `target` to the container needs a restart: a changed resource its resizePolicy says RestartContainer for. */
export function resizeNeedsRestart(container: ContainerRecord, actuated: ResourceRequirements | undefined, target: ResourceRequirements | undefined): boolean {
  return RESIZED.some((resource) => {
    const policy = container.spec.resizePolicy?.find((p) => p.resourceName === resource)?.restartPolicy ?? "NotRequired";
    if (policy !== "RestartContainer") return false;
    const values = (r: ResourceRequirements | undefined) => [r?.requests[resource], r?.limits[resource]].map((q) => (q === undefined ? 0n : parseQuantity(q).milliValue()));
    const [had, wants] = [values(actuated), values(target)];
    return had[0] !== wants[0] || had[1] !== wants[1];
  });
}

/** A memory limit the resize lowers (or sets where there was none): usage must be below it first. */
export function loweredMemoryLimit(actuated: ResourceRequirements | undefined, target: ResourceRequirements | undefined): bigint | undefined {
  const limit = target?.limits.memory;
  if (limit === undefined) return undefined;
  const wanted = parseQuantity(limit).value();
  const had = actuated?.limits.memory;
  return had === undefined || wanted < parseQuantity(had).value() ? wanted : undefined;
}

/**
 * The resources part of the kubelet's resize events: `{"containers":[{"name":"c1","resources":
 * {...}}],"generation":2}` (events/resize.go makeResourceSummaryFromSpec), from the spec.
 */
export function resizeSummary(spec: PodSpec, generation: number | undefined, error?: string): string {
  const entry = (c: ContainerSpec) => ({ name: c.name, resources: resourcesJson(c.resources) });
  const summary: Record<string, unknown> = {};
  if (spec.initContainers.length > 0) summary.initContainers = spec.initContainers.map(entry);
  if (spec.containers.length > 0) summary.containers = spec.containers.map(entry);
  summary.generation = generation ?? 0;
  if (error) summary.error = error;
  return JSON.stringify(summary);
}

function resourcesJson(resources: ResourceRequirements | undefined): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (resources && Object.keys(resources.limits).length > 0) json.limits = resources.limits;
  if (resources && Object.keys(resources.requests).length > 0) json.requests = resources.requests;
  return json;
}

/** metadata.generation of a pod read from an API server (the resize conditions and events name it); undefined for a file's. */
export function podGeneration(spec: PodSpec): number | undefined {
  const generation = (spec.manifest.metadata as { generation?: unknown } | undefined)?.generation;
  return typeof generation === "number" ? generation : undefined;
}

/**
 * The resize in progress is applied to every running container: its condition goes. Returns the
 * generation it was for when it went now (the ResizeCompleted event follows), else null.
 */
export function finishResize(pod: PodRecord): { generation: number | undefined } | null {
  const inProgress = pod.resize?.inProgress;
  if (!inProgress || allContainers(pod).some((c) => pendingActuation(pod, c))) return null;
  delete pod.resize!.inProgress;
  if (!pod.resize!.pending) delete pod.resize;
  return { generation: inProgress.generation };
}

/**
 * Applying the resize failed (the runtime refused it, or the memory limit would fall below the
 * usage): the in-progress condition says so. True when that is new (a ResizeError event follows).
 */
export function failResize(pod: PodRecord, error: string, now: number): boolean {
  const conditions = (pod.resize ??= {});
  const previous = conditions.inProgress;
  if (previous?.error === error) return false;
  conditions.inProgress = { since: previous?.since ?? now, error, ...(previous?.generation !== undefined && { generation: previous.generation }) };
  return true;
}
