/**
 * The v1 Pod as the API serves it, reduced to the fields minikubelet writes and the printer reads.
 * Field names are exactly the Kubernetes JSON names, so a real `kubectl get pods -o json` object
 * type-checks against these shapes and a minikubelet status file can be read by kubectl tooling.
 * Timestamps are RFC 3339 strings (`2026-01-01T12:00:00Z`), as in the API; `null` appears in real
 * output for unset times (`creationTimestamp: null` in a bare manifest, `lastProbeTime: null`).
 */

export type V1Time = string | null;

export type V1PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

export type V1ConditionStatus = "True" | "False" | "Unknown";

export interface V1ObjectMeta {
  name: string;
  /** Absent in some files; readers treat it as `default`. */
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: V1Time;
  /** Set when the pod is being deleted: STATUS becomes Terminating (or Unknown after NodeLost). */
  deletionTimestamp?: V1Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface V1Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  /** On an init container `Always` makes it a restartable ("sidecar") init container; on an app container its own policy (KEP-5307). */
  restartPolicy?: string;
  restartPolicyRules?: { action: string; exitCodes?: { operator: string; values?: number[] } }[];
  /** The container's own stdin and terminal, which `kubectl attach` reaches. */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

export interface V1PodReadinessGate {
  conditionType: string;
}

export interface V1PodSpec {
  containers: V1Container[];
  initContainers?: V1Container[];
  ephemeralContainers?: V1Container[];
  restartPolicy?: "Always" | "OnFailure" | "Never";
  nodeName?: string;
  terminationGracePeriodSeconds?: number;
  readinessGates?: V1PodReadinessGate[];
}

export interface V1PodCondition {
  /** PodScheduled, PodReadyToStartContainers, Initialized, ContainersReady, Ready, or a gate's type. */
  type: string;
  status: V1ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: V1Time;
  lastTransitionTime?: V1Time;
}

export interface V1ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface V1ContainerStateRunning {
  startedAt?: V1Time;
}

export interface V1ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: V1Time;
  finishedAt?: V1Time;
  containerID?: string;
}

/** At most one member is set; none set means the runtime has not reported the container yet. */
export interface V1ContainerState {
  waiting?: V1ContainerStateWaiting;
  running?: V1ContainerStateRunning;
  terminated?: V1ContainerStateTerminated;
}

export interface V1ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state?: V1ContainerState;
  lastState?: V1ContainerState;
  /** The signal a stop sends (KEP-4960): the spec's, else the image's, else SIGTERM. */
  stopSignal?: string;
  /** The resources the container runs with (an in-place resize changes them). */
  resources?: V1ResourceRequirements;
  /** The requests the node allocated it. */
  allocatedResources?: Record<string, string>;
}

export interface V1ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

export interface V1PodIP {
  ip: string;
}

export interface V1PodStatus {
  /** A string rather than V1PodPhase: real objects and Kubernetes' own tests carry other values. */
  phase?: V1PodPhase | (string & {});
  reason?: string;
  message?: string;
  conditions?: V1PodCondition[];
  hostIP?: string;
  hostIPs?: V1PodIP[];
  podIP?: string;
  podIPs?: V1PodIP[];
  nominatedNodeName?: string;
  startTime?: V1Time;
  qosClass?: string;
  initContainerStatuses?: V1ContainerStatus[];
  containerStatuses?: V1ContainerStatus[];
  ephemeralContainerStatuses?: V1ContainerStatus[];
}

export interface V1Pod {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta;
  spec: V1PodSpec;
  status?: V1PodStatus;
}

/** `kubectl get pods -o json` prints a `List`; the API itself returns a `PodList`. */
export interface V1PodList {
  apiVersion: "v1";
  kind: "List" | "PodList";
  metadata?: { resourceVersion?: string };
  items: V1Pod[];
}

/** Wraps pods the way `kubectl get pods -o json` does, so the output reads back with `get -f`. */
export function podList(pods: V1Pod[]): V1PodList {
  return {
    apiVersion: "v1",
    items: pods.map(withTypeMeta),
    kind: "List",
    metadata: { resourceVersion: "" },
  };
}

/** The pod with `apiVersion: v1` and `kind: Pod` first, as kubectl prints each object. */
export function withTypeMeta(pod: V1Pod): V1Pod {
  return { ...pod, apiVersion: pod.apiVersion ?? "v1", kind: pod.kind ?? "Pod" };
}
