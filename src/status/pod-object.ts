/**
 * The v1 Pod the kubelet would report for a pod record: metadata with the static-pod annotations,
 * the spec as written (plus nodeName), and a status with phase, conditions and container statuses.
 */
import type { ContainerSpec } from "../manifest/types.ts";
import { containerWithDefaults } from "./api-defaults.ts";
import { nodeNameOf } from "../node-name.ts";
import { podQosClass } from "../manifest/qos.ts";
import { restartCountOf, type ContainerRecord, type PodRecord, type Termination } from "../kubelet/pod-state.ts";
import { podConditions } from "./conditions.ts";
import { isoTime } from "./time.ts";
import type { V1ContainerState, V1ContainerStatus, V1Pod, V1PodSpec } from "./v1.ts";

export interface PodObjectOptions {
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

export function containerStatus(container: ContainerRecord, runtimeName: string): V1ContainerStatus {
  const status: V1ContainerStatus = {
    name: container.name,
    image: container.spec.image,
    imageID: "",
    ready: container.ready,
    restartCount: restartCountOf(container),
    started: container.state === "running" && container.started,
    state: currentState(container, runtimeName),
    lastState: container.lastTermination ? terminatedState(container.lastTermination, runtimeName) : {},
  };
  const id = container.containerId ?? container.terminated?.containerId;
  if (id) status.containerID = `${runtimeName}://${id}`;
  return status;
}

export function podObject(pod: PodRecord, options: PodObjectOptions): V1Pod {
  const { spec } = pod;
  const manifestSpec = (spec.manifest.spec ?? {}) as Record<string, unknown>;
  const metadata: V1Pod["metadata"] = {
    name: spec.fullName,
    namespace: spec.namespace,
    uid: spec.uid,
    creationTimestamp: isoTime(pod.createdAt),
    labels: { ...spec.labels },
    annotations: {
      ...spec.annotations,
      "kubernetes.io/config.hash": spec.configHash,
      "kubernetes.io/config.seen": isoTime(pod.createdAt),
      "kubernetes.io/config.source": spec.api ? "api" : "file",
    },
  };
  if (pod.deletionRequestedAt !== undefined) {
    metadata.deletionTimestamp = isoTime(pod.deletionRequestedAt);
    metadata.deletionGracePeriodSeconds = pod.deletionGraceSeconds ?? spec.terminationGracePeriodSeconds;
  }
  const status: NonNullable<V1Pod["status"]> = {
    phase: pod.phase,
    conditions: podConditions(pod),
    hostIP: "127.0.0.1",
    hostIPs: [{ ip: "127.0.0.1" }],
    qosClass: podQosClass([...spec.initContainers, ...spec.containers]),
    containerStatuses: pod.app.map((c) => containerStatus(c, options.runtimeName)),
  };
  if (pod.rejected) {
    // The kubelet's rejectPod sets phase, reason and message only: no container ever had a status.
    status.reason = pod.rejected.reason;
    status.message = pod.rejected.message;
    delete status.containerStatuses;
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
  if (pod.init.length > 0 && !pod.rejected && !pod.waitingForNode) status.initContainerStatuses = pod.init.map((c) => containerStatus(c, options.runtimeName));
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      ...(manifestSpec as unknown as V1PodSpec),
      // The validated spec is the truth; the manifest's lists are echoed when they are there.
      containers: withDefaults(manifestSpec.containers, spec.containers) ?? spec.containers.map(({ name, image }) => ({ name, image })),
      ...(spec.initContainers.length > 0 && {
        initContainers:
          withDefaults(manifestSpec.initContainers, spec.initContainers) ??
          spec.initContainers.map(({ name, image, restartPolicy }) => ({ name, image, ...(restartPolicy && { restartPolicy }) })),
      }),
      restartPolicy: spec.restartPolicy,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
      nodeName: nodeNameOf(spec.node),
    },
    status,
  };
}

/** The manifest's containers as written, with the API server's defaults from the validated ones. */
function withDefaults(written: unknown, validated: readonly ContainerSpec[]): V1PodSpec["containers"] | undefined {
  if (!Array.isArray(written)) return undefined;
  return written.map((container: Record<string, unknown>) =>
    containerWithDefaults(container, validated.find((v) => v.name === container.name)),
  ) as unknown as V1PodSpec["containers"];
}
