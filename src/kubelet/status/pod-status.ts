/**
 * The loop's status module, the kubelet's generateAPIPodStatus: the one place a pod record becomes
 * a v1 PodStatus (phase, conditions, container statuses), built once per pass and drawn into the
 * served Pod (v1/pod-object.ts) that the store saves as it is given.
 */
import { podQosClass } from "../../manifest/qos.ts";
import { podObject } from "../../v1/pod-object.ts";
import { isoTime } from "../../v1/time.ts";
import type { V1ContainerState, V1ContainerStatus, V1Pod, V1PodStatus, V1ResourceRequirements } from "../../v1/v1.ts";
import { actuatedResources, allocatedResources } from "../pod-resize.ts";
import { HOST_IP } from "../env/downward-values.ts";
import { podConditions } from "./pod-conditions.ts";
import { stopSignalOf } from "../lifecycle/stop-signal.ts";
import { restartCountOf, type ContainerRecord, type PodRecord, type Termination } from "../pod-state.ts";
import { POST_START_HOOK_ERROR, postStartFailed, postStartRunning } from "../lifecycle/post-start.ts";

export interface PodStatusOptions {
  /** Container ids are prefixed with it, like `containerd://` or `docker://`. */
  runtimeName: string;
}

function terminatedState(termination: Termination, runtimeName: string): V1ContainerState {
  const terminated: NonNullable<V1ContainerState["terminated"]> = {
    exitCode: termination.exitCode,
    reason: termination.reason,
    finishedAt: isoTime(termination.finishedAt),
  };
  if (termination.signal !== undefined) terminated.signal = termination.signal;
  if (termination.message) terminated.message = termination.message;
  if (termination.startedAt !== undefined) terminated.startedAt = isoTime(termination.startedAt);
  if (termination.containerId) terminated.containerID = `${runtimeName}://${termination.containerId}`;
  return { terminated };
}

function currentState(container: ContainerRecord, runtimeName: string): V1ContainerState {
  // As the kubelet's status stands while its worker is held in the start: the container is still being created.
  if (postStartRunning(container)) return { waiting: { reason: "ContainerCreating" } };
  const hookError = postStartFailed(container);
  if (hookError !== undefined) return { waiting: { reason: POST_START_HOOK_ERROR, message: hookError } };
  switch (container.state) {
    case "running":
      return { running: { startedAt: isoTime(container.startedAt ?? 0) } };
    case "terminated":
      return container.terminated ? terminatedState(container.terminated, runtimeName) : { waiting: {} };
    case "waiting": {
      const waiting: NonNullable<V1ContainerState["waiting"]> = {};
      if (container.waiting?.reason) waiting.reason = container.waiting.reason;
      if (container.waiting?.message) waiting.message = container.waiting.message;
      return { waiting };
    }
  }
}

/**
 * What the kubelet's status says of a container's resources once the runtime has it: `resources`
 * the running attempt's (its allocation, unless a resize is not applied to it yet), and
 * `allocatedResources` the requests the node allocated.
 */
function withResources(status: V1ContainerStatus, pod: PodRecord, container: ContainerRecord): V1ContainerStatus {
  if (status.containerID === undefined || container.kind === "ephemeral") return status;
  const allocated = allocatedResources(pod, container);
  const resources = container.state === "running" ? actuatedResources(pod, container) : allocated;
  const requirements: V1ResourceRequirements = {};
  if (resources && Object.keys(resources.limits).length > 0) requirements.limits = { ...resources.limits };
  if (resources && Object.keys(resources.requests).length > 0) requirements.requests = { ...resources.requests };
  return {
    ...status,
    ...(allocated && Object.keys(allocated.requests).length > 0 && { allocatedResources: { ...allocated.requests } }),
    resources: requirements,
  };
}

export function containerStatus(container: ContainerRecord, runtimeName: string): V1ContainerStatus {
  // The kubelet counts an attempt once its start returned, after the hook.
  const hookRunning = postStartRunning(container);
  const status: V1ContainerStatus = {
    name: container.name,
    image: container.spec.image,
    imageID: "",
    ready: container.ready,
    restartCount: hookRunning ? restartCountOf({ attempts: container.attempts - 1 }) : restartCountOf(container),
    started: container.state === "running" && container.started,
    state: currentState(container, runtimeName),
    lastState: container.lastTermination ? terminatedState(container.lastTermination, runtimeName) : {},
  };
  const id = container.containerId ?? container.terminated?.containerId;
  if (id && !hookRunning) status.containerID = `${runtimeName}://${id}`;
  // What the CRI reports for a container it has: so for an attempt that exists, not one waiting to be made.
  if (id && !hookRunning) status.stopSignal = stopSignalOf(container);
  return status;
}

/**
 * A non-restartable init container is ready once it exited 0, and not while it runs (the prober
 * manager's UpdatePodStatus); a sidecar's readiness follows its probes like an app container's.
 */
function initContainerStatus(container: ContainerRecord, runtimeName: string): V1ContainerStatus {
  const status = containerStatus(container, runtimeName);
  if (container.kind === "sidecar") return status;
  return { ...status, ready: container.state === "terminated" && container.terminated?.exitCode === 0 };
}

/** No probe runs on an ephemeral container, so the prober never marks it ready or started: ready stays false and started is never set. */
function ephemeralContainerStatus(container: ContainerRecord, runtimeName: string): V1ContainerStatus {
  const { started: _started, ...status } = containerStatus(container, runtimeName);
  return { ...status, ready: false };
}

/** The pod's status as the kubelet would report it after this pass. */
export function podStatus(pod: PodRecord, options: PodStatusOptions): V1PodStatus {
  const { spec } = pod;
  const status: V1PodStatus = {
    phase: pod.phase,
    conditions: podConditions(pod),
    hostIP: HOST_IP,
    hostIPs: [{ ip: HOST_IP }],
    qosClass: podQosClass([...spec.initContainers, ...spec.containers], spec.resources),
    containerStatuses: pod.app.map((c) => withResources(containerStatus(c, options.runtimeName), pod, c)),
  };
  if (pod.rejected) {
    // The kubelet's rejectPod sets phase, reason and message only: no container ever had a status.
    status.reason = pod.rejected.reason;
    status.message = pod.rejected.message;
    delete status.containerStatuses;
  }
  if (pod.evicted) {
    // As the eviction manager's status: the containers keep their statuses, the pod says why it failed.
    status.reason = pod.evicted.reason ?? "Evicted";
    status.message = pod.evicted.message;
  }
  if (pod.waitingForNode) {
    // As a cluster shows a pod no node will take yet: one PodScheduled condition, no container statuses.
    status.conditions = [
      { type: "PodScheduled", status: "False", lastProbeTime: null, lastTransitionTime: isoTime(pod.createdAt), reason: "Unschedulable", message: pod.waitingForNode.message },
    ];
    delete status.containerStatuses;
  }
  if (pod.sandbox) {
    status.podIP = pod.sandbox.ip;
    status.podIPs = [{ ip: pod.sandbox.ip }];
  }
  if (pod.startTime !== undefined) status.startTime = isoTime(pod.startTime);
  if (pod.init.length > 0 && !pod.rejected && !pod.waitingForNode) status.initContainerStatuses = pod.init.map((c) => withResources(initContainerStatus(c, options.runtimeName), pod, c));
  if (pod.ephemeral && pod.ephemeral.length > 0) status.ephemeralContainerStatuses = pod.ephemeral.map((c) => ephemeralContainerStatus(c, options.runtimeName));
  return status;
}

/** The served Pod for the record as the loop has it now: its spec, its deletion, and this pass's status. */
export function servedPod(pod: PodRecord, options: PodStatusOptions): V1Pod {
  const deletion =
    pod.deletionRequestedAt === undefined
      ? undefined
      : { requestedAt: pod.deletionRequestedAt, graceSeconds: pod.deletionGraceSeconds ?? pod.spec.terminationGracePeriodSeconds };
  return podObject(pod.spec, { createdAt: pod.createdAt, ...(deletion && { deletion }) }, podStatus(pod, options));
}
