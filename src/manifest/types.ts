/**
 * A Pod as minikubelet runs it: validated, with the API server's defaults filled in.
 * Field names follow the v1 API so the mapping to a manifest stays obvious.
 */

/** `${namespace}/${fullName}`: the identity of a pod across files, passes and restarts. */
export type PodKey = string;

export type RestartPolicy = "Always" | "OnFailure" | "Never";

/** `restartPolicyRules[]`: 1.35 knows one action and one condition, an exit code In or NotIn a set. */
export interface ContainerRestartRule {
  action: "Restart";
  exitCodes: { operator: "In" | "NotIn"; values: number[] };
}
export type PullPolicy = "Always" | "IfNotPresent" | "Never";
export type ProbeKind = "startup" | "liveness" | "readiness";

export interface HttpHeader {
  name: string;
  value: string;
}

export interface ExecAction {
  type: "exec";
  command: string[];
}

export interface HttpGetAction {
  type: "httpGet";
  scheme: "HTTP" | "HTTPS";
  /** Empty means the pod IP. */
  host: string;
  path: string;
  /** Resolved port number (a named port is looked up in the container's ports). */
  port: number;
  /** The port as written, when it was a name, for describe output (`http-get http://:http/`). */
  portName?: string;
  httpHeaders: HttpHeader[];
}

export interface TcpSocketAction {
  type: "tcpSocket";
  host: string;
  port: number;
  portName?: string;
}

/** A gRPC health check (grpc.health.v1.Health/Check) against the pod IP; no host, no named port in the API. */
export interface GrpcAction {
  type: "grpc";
  port: number;
  /** The HealthCheckRequest's service; "" (the API's default) asks about the server as a whole. */
  service: string;
}

export interface SleepAction {
  type: "sleep";
  seconds: number;
}

export type ProbeHandler = ExecAction | HttpGetAction | TcpSocketAction | GrpcAction;
export type LifecycleHandler = ExecAction | HttpGetAction | SleepAction;

export interface Probe {
  handler: ProbeHandler;
  initialDelaySeconds: number;
  timeoutSeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
  /** Overrides the pod's grace period when a liveness or startup failure kills the container. */
  terminationGracePeriodSeconds?: number;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol: "TCP" | "UDP" | "SCTP";
}

export interface EnvVar {
  name: string;
  /** "" for a variable taken from `valueFrom`, until the kubelet resolves it (downward-values.ts). */
  value: string;
  /** The downward API: a field of the pod or a resource of a container (static pods refer to no ConfigMap or Secret). */
  valueFrom?: EnvVarSource;
}

/** `fieldRef`: a field of the pod, `metadata.labels['k']` style subscripts included. */
export interface ObjectFieldSelector {
  apiVersion: string;
  fieldPath: string;
}

/** `resourceFieldRef`: `limits.cpu` and the like of a container, divided by `divisor` (as written; absent is 1). */
export interface ResourceFieldSelector {
  /** Absent in env: the container the variable belongs to. */
  containerName?: string;
  resource: string;
  divisor?: string;
}

/** `configMapKeyRef` and `secretKeyRef`: one key of an API object in the pod's namespace (never on a static pod). */
export interface ObjectKeySelector {
  name: string;
  key: string;
  /** A missing object or key leaves the variable out instead of holding the container back. */
  optional: boolean;
}

export type EnvVarSource =
  | { fieldRef: ObjectFieldSelector }
  | { resourceFieldRef: ResourceFieldSelector }
  | { configMapKeyRef: ObjectKeySelector }
  | { secretKeyRef: ObjectKeySelector };

/** `envFrom[i]`: every key of a ConfigMap or Secret as a variable, each name prefixed. */
export interface EnvFromSource {
  prefix: string;
  kind: "configMap" | "secret";
  name: string;
  optional: boolean;
}

/** `items[i]` of a configMap or secret volume (or projection): one key written at `path`. */
export interface KeyToPath {
  key: string;
  path: string;
  /** Absent: the volume's defaultMode. */
  mode?: number;
}

/** A configMap or secret volume, or one such projection: the object's keys as files. */
export interface ObjectFilesSource {
  name: string;
  /** Absent: every key, each at a path of its own name. */
  items?: KeyToPath[];
  optional: boolean;
}

/** One source of a projected volume. */
export type VolumeProjection =
  | { kind: "configMap"; source: ObjectFilesSource }
  | { kind: "secret"; source: ObjectFilesSource }
  | { kind: "downwardAPI"; items: DownwardAPIFile[] }
  /** A ServiceAccount token from the TokenRequest API, bound to the pod, refreshed before it expires. */
  | { kind: "serviceAccountToken"; path: string; audience?: string; expirationSeconds: number };

/** One file of a downwardAPI volume: exactly one of fieldRef and resourceFieldRef. */
export interface DownwardAPIFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  /** The file's mode; absent means the volume's defaultMode. */
  mode?: number;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly: boolean;
  subPath?: string;
}

export type Volume =
  | {
      name: string;
      type: "emptyDir";
      /** A tmpfs instead of a directory on the node's disk. */
      medium?: "Memory";
      /** sizeLimit as the API server prints it (`1Mi`), for the eviction message; absent or zero: no limit. */
      sizeLimit?: string;
      /** The same in bytes: past it the pod is evicted; a memory medium's tmpfs size. */
      sizeLimitBytes?: number;
    }
  | { name: string; type: "hostPath"; path: string; hostPathType: string }
  | { name: string; type: "downwardAPI"; defaultMode: number; items: DownwardAPIFile[] }
  | { name: string; type: "configMap"; defaultMode: number; source: ObjectFilesSource }
  | { name: string; type: "secret"; defaultMode: number; source: ObjectFilesSource }
  | { name: string; type: "projected"; defaultMode: number; sources: VolumeProjection[] };

/** The volumes whose files the kubelet writes itself (the runtimes mount them read-only where an emptyDir would be). */
export type FilledVolume = Extract<Volume, { type: "downwardAPI" | "configMap" | "secret" | "projected" }>;

export function isFilledVolume(volume: Volume): volume is FilledVolume {
  return volume.type === "downwardAPI" || volume.type === "configMap" || volume.type === "secret" || volume.type === "projected";
}

/** Resource name to quantity as the API server serves it (`500m`, `128Mi`); parse with parseQuantity. */
export type ResourceList = Record<string, string>;

/** A container's resources, with requests defaulted from limits (SetDefaults_Pod). */
export interface ResourceRequirements {
  limits: ResourceList;
  requests: ResourceList;
}

export interface ContainerSpec {
  name: string;
  image: string;
  imagePullPolicy: PullPolicy;
  /** Replaces the image's ENTRYPOINT. The process runtime, which has no image, runs command + args. */
  command: string[];
  /** Replaces the image's CMD; without command, the process runtime runs args (args[0] the program). */
  args: string[];
  workingDir?: string;
  env: EnvVar[];
  /** ConfigMaps and Secrets whose keys all become variables (before `env`, which overrides them); absent when none. */
  envFrom?: EnvFromSource[];
  ports: ContainerPort[];
  volumeMounts: VolumeMount[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  /** Runs right after the container starts; it is not started (nor probed) until the hook returns. */
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
  /** `lifecycle.stopSignal`: what a stop sends instead of the image's or the runtime's default (KEP-4960). */
  stopSignal?: string;
  /** Absent when the container sets none (and in records written before resources were read). */
  resources?: ResourceRequirements;
  /** How an in-place resize of each resource is applied (absent, or a resource not named: NotRequired). */
  resizePolicy?: ContainerResizePolicy[];
  /**
   * The container's own stdin stays open for `kubectl attach -i` (absent: false); with `stdinOnce`
   * it is closed once the first attach's stdin ends; `tty` runs it on a terminal. The runtimes that
   * cannot honour them say so (runtime-rules.ts runtimeWarnings, Runtime.attachSupport).
   */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  /**
   * The container's own restart policy (KEP-5307, beta in 1.35), overriding the pod's; absent: the
   * pod's applies. On an init container "Always" makes it a native sidecar (KEP-753) instead.
   */
  restartPolicy?: RestartPolicy;
  /** Evaluated in order on each exit before restartPolicy, which they require (KEP-5307); absent when none. */
  restartPolicyRules?: ContainerRestartRule[];
  /** Only on ephemeral containers: the container whose process namespace it joins (`kubectl debug --target`). */
  targetContainerName?: string;
  /** Where the container may write why it ended (absolute): the runtime gives it a file there and reads it at the exit. */
  terminationMessagePath: string;
  /**
   * FallbackToLogsOnError: a failed container that left that file empty gets the end of its log as
   * its message. Absent is File (the message is the file only); a spec recorded before reads the same.
   */
  terminationMessagePolicy?: "FallbackToLogsOnError";
}

export interface ContainerResizePolicy {
  resourceName: "cpu" | "memory";
  /** RestartContainer: the container is restarted to take the new value; NotRequired: applied to the running one. */
  restartPolicy: "NotRequired" | "RestartContainer";
}

export interface PodSpec {
  key: PodKey;
  namespace: string;
  /** metadata.name as written in the file. */
  name: string;
  /** `NAME-NODE` when a node name is set (mirror-pod naming), else NAME. */
  fullName: string;
  node: string;
  /** Stable for the same node, file and content; changes when the file changes. */
  uid: string;
  /** Hash of the canonical pod JSON and the node: a change means the pod is replaced. */
  configHash: string;
  /** The manifest file this pod came from; API_POD_SOURCE for a pod created through the API. */
  source: string;
  /** Set for a pod created through the API (the second source): what the API server decided for it. */
  api?: ApiPodMeta;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  restartPolicy: RestartPolicy;
  terminationGracePeriodSeconds: number;
  /**
   * How long the pod may be active on the node, from its start time: past it the pod is Failed with
   * reason DeadlineExceeded and its containers stopped. An API pod may lower or set it in place.
   */
  activeDeadlineSeconds?: number;
  /**
   * Pod-level resources (spec.resources) with the API server's defaults: they decide the pod's QoS
   * class when set. Absent when the pod sets none.
   */
  resources?: ResourceRequirements;
  initContainers: ContainerSpec[];
  containers: ContainerSpec[];
  /**
   * Containers added to a running pod through the API's ephemeralcontainers subresource (`kubectl
   * debug`): started once, never restarted, never part of the pod's phase or readiness. Absent in records
   * checkpointed before they were read.
   */
  ephemeralContainers?: ContainerSpec[];
  volumes: Volume[];
  hostNetwork: boolean;
  shareProcessNamespace: boolean;
  /**
   * A pod of the cluster, bound to this node (admitted with API objects allowed): it may reference
   * ConfigMaps, Secrets and ServiceAccount tokens, and its env waits for the Services to be read
   * (what the kubelet does for a pod that is not static). Absent on static pods.
   */
  fromCluster?: true;
  /**
   * The manifest as the API server would store it (unknown fields dropped, its defaults applied once,
   * at admission): what the served Pod's spec is drawn from.
   */
  manifest: Record<string, unknown>;
}

/** What a pod created through the API carries beyond its manifest. */
export interface ApiPodMeta {
  /** metadata.creationTimestamp, epoch ms: kept across agent restarts, unlike a file pod's. */
  createdAt: number;
  /** Set once a delete was accepted: the pod stops with this grace and then its row goes. */
  deletion?: { requestedAt: number; gracePeriodSeconds: number };
}

/** PodSpec.source of a pod created through the API (a file pod's is its file's absolute path). */
export const API_POD_SOURCE = "api";

/** For an init container: restartable (KEP-753), started in order, then kept running beside the app. */
export function isSidecar(container: ContainerSpec): boolean {
  return container.restartPolicy === "Always";
}
