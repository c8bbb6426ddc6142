/**
 * What each runtime adds to the API's rules: what it cannot start at all (an error, so `validate
 * --runtime` and `run`'s file source refuse the file instead of the loop retrying a StartError),
 * and what it accepts but cannot honour (a warning, once per pod). The runtime itself checks the
 * same rule before starting a container, from this one place.
 */
import type { ContainerSpec, PodSpec } from "./types.ts";
import type { FieldPath, Issue } from "./errors.ts";
import { isPlainObject } from "./fields.ts";
import { DEFAULT_TERMINATION_MESSAGE_PATH } from "./defaults.ts";
import { isAdmittedTokenMount } from "./service-account-token.ts";

export const RUNTIME_NAMES = ["process", "docker"] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

export function isRuntimeName(value: unknown): value is RuntimeName {
  return (RUNTIME_NAMES as readonly unknown[]).includes(value);
}

/** What of one container the runtime refuses (a field, or the container itself), with why. */
export interface ContainerProblem {
  /** The field at fault; absent when the problem is the container's as a whole. */
  field?: string;
  message: string;
}

/**
 * Why `runtime` cannot start `container` at all, or undefined. The process runtime has no image:
 * what an image without ENTRYPOINT does with its CMD, it does with `args` (`kubectl run x
 * --image=busybox -- sleep 10` sets only args), so it needs one of the two.
 */
export function containerStartProblem(container: ContainerSpec, runtime: RuntimeName): ContainerProblem | undefined {
  if (runtime === "process" && container.command.length === 0 && container.args.length === 0) {
    return { message: "required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)" };
  }
  return undefined;
}

/**
 * Every container of the pod the runtime cannot start, each with its field path. `pod` may have
 * been read from an invalid manifest: a list that lost an item that was no object is skipped, as
 * its indices no longer match the file's (the validator has named that item).
 */
export function runtimeErrors(pod: PodSpec, runtime: RuntimeName): Issue[] {
  const issues: Issue[] = [];
  const spec = objectAt(pod.manifest, "spec") ?? {};
  for (const [list, containers] of [["initContainers", pod.initContainers], ["containers", pod.containers]] as const) {
    const written = spec[list];
    if (Array.isArray(written) && written.length !== containers.length) continue;
    containers.forEach((container, index) => {
      const problem = containerStartProblem(container, runtime);
      if (problem) issues.push({ path: ["spec", list, index, ...(problem.field ? [problem.field] : [])], message: problem.message });
    });
  }
  return issues;
}

/**
 * The securityContext fields each runtime applies: docker hands them to the engine
 * (runtime/docker/docker-security.ts), the process runtime's monitor applies them itself
 * (runtime/process/process-security.ts; an agent that is not root refuses what needs root).
 */
const CONTAINER_SECURITY: readonly string[] = ["runAsUser", "runAsGroup", "privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities"];
const POD_SECURITY: Readonly<Record<RuntimeName, readonly string[]>> = {
  docker: ["runAsUser", "runAsGroup", "supplementalGroups", "sysctls"],
  process: ["runAsUser", "runAsGroup", "supplementalGroups"],
};
const FS_GROUP_HONOURED: Readonly<Record<RuntimeName, string>> = {
  docker: "honoured by the docker runtime as an extra group of each container and as the group (setgid) of the pod's emptyDir directories; other volumes' ownership is not changed",
  process: "honoured by the process runtime as an extra group of each container; volumes' ownership is not changed",
};
/** What the loop checks on either runtime before a start (kubelet/run-as-non-root.ts): the process runtime against the agent's own user. */
const CHECKED_SECURITY: readonly string[] = ["runAsNonRoot"];

/**
 * Fields set in the manifest (`raw`, already validated) that the runtime accepts but cannot honour:
 * the pod runs, and the user is told once what does not take effect.
 */
export function runtimeWarnings(raw: unknown, runtime: RuntimeName): Issue[] {
  const issues: Issue[] = [];
  const spec = objectAt(raw, "spec");
  if (!spec) return issues;
  const name = `the ${runtime} runtime`;
  for (const key of Object.keys(objectAt(spec, "securityContext") ?? {})) {
    if (POD_SECURITY[runtime].includes(key) || CHECKED_SECURITY.includes(key)) continue;
    const message = key === "fsGroup" ? FS_GROUP_HONOURED[runtime] : `not honoured by ${name}`;
    issues.push({ path: ["spec", "securityContext", key], message });
  }
  issues.push(...podNamespaceWarnings(spec, runtime));
  const podResources = objectAt(spec, "resources");
  if (podResources && Object.values(podResources).some((list) => isPlainObject(list) && Object.keys(list).length > 0)) {
    issues.push({ path: ["spec", "resources"], message: `not enforced by ${name}: pod-level requests and limits set the QoS class and count at admission, but only each container's own cpu and memory limits are applied` });
  }
  if (Array.isArray(spec.imagePullSecrets) && spec.imagePullSecrets.length > 0) {
    const why = runtime === "process" ? "the process runtime pulls no images" : "the docker runtime pulls with the engine's own credentials (docker login on the host)";
    issues.push({ path: ["spec", "imagePullSecrets"], message: `not used: ${why}` });
  }
  if (runtime === "process" && Array.isArray(spec.hostAliases) && spec.hostAliases.length > 0) {
    issues.push({ path: ["spec", "hostAliases"], message: "honoured by the process runtime only as root (after the kubelet's entries for the pod's hostname, or for a hostNetwork pod after the host's own /etc/hosts, bound in the container's own mount namespace); else the container reads the host's /etc/hosts without them" });
  }
  for (const list of ["initContainers", "containers"] as const) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [];
    containers.forEach((container, index) => {
      if (!isPlainObject(container)) return;
      const at = (...rest: (string | number)[]): FieldPath => ["spec", list, index, ...rest];
      for (const key of Object.keys(objectAt(container, "securityContext") ?? {})) {
        if (CONTAINER_SECURITY.includes(key) || CHECKED_SECURITY.includes(key)) continue;
        issues.push({ path: at("securityContext", key), message: `not honoured by ${name}` });
      }
      resourceWarnings(container, at, issues, name);
      // Docker mounts a file of the container's own there; the process runtime cannot (its unhonouredTerminationMessagePath).
      // The API's default is on every container an API server stored: only a path the user chose is told.
      if (runtime === "process" && container.terminationMessagePath !== undefined && container.terminationMessagePath !== DEFAULT_TERMINATION_MESSAGE_PATH) {
        issues.push({
          path: at("terminationMessagePath"),
          message: `not honoured by ${name}: the container has no file of its own there, so nothing written to it is read; with terminationMessagePolicy FallbackToLogsOnError a failed container's message is the end of its log`,
        });
      }
      if (runtime === "process") processMountWarnings(container, at, issues);
      if (runtime === "docker") dockerPortWarnings(container, at, issues);
      if (runtime === "process") processPortWarnings(container, at, issues);
    });
  }
  return issues;
}

/**
 * The resources both runtimes enforce: docker hands them to the engine (runtime/docker/docker-resources.ts),
 * the process runtime writes them to the container's cgroup (runtime/process/cgroups.ts). Any other name is
 * only accounted (validation, QoS, admission), so the user is told.
 */
const ENFORCED_RESOURCES: readonly string[] = ["cpu", "memory"];

function resourceWarnings(container: Record<string, unknown>, at: (...rest: (string | number)[]) => FieldPath, issues: Issue[], name: string): void {
  const resources = objectAt(container, "resources") ?? {};
  for (const key of Object.keys(resources)) {
    const list = objectAt(resources, key);
    if (!list || (key !== "limits" && key !== "requests")) {
      issues.push({ path: at("resources", key), message: `not enforced by ${name}` });
      continue;
    }
    for (const resource of Object.keys(list)) {
      if (!ENFORCED_RESOURCES.includes(resource)) issues.push({ path: at("resources", key, resource), message: `not enforced by ${name}` });
    }
  }
}

/**
 * No mount namespace: a volume's host path is handed over in MINIKUBELET_VOLUME_<NAME> instead. The
 * ServiceAccount admission's token mount, which the pod's author did not write, is not told of at
 * each create (docs/runtimes.md says where a process finds its token).
 */
function processMountWarnings(container: Record<string, unknown>, at: (...rest: (string | number)[]) => FieldPath, issues: Issue[]): void {
  const mounts = Array.isArray(container.volumeMounts) ? container.volumeMounts : [];
  mounts.forEach((mount, index) => {
    if (!isPlainObject(mount) || isAdmittedTokenMount(mount)) return;
    const env = typeof mount.name === "string" ? volumeEnvName(mount.name) : "MINIKUBELET_VOLUME_<NAME>";
    issues.push({
      path: at("volumeMounts", index, "mountPath"),
      message: `honoured by the process runtime only as root and where the path exists on the host (bound in the container's own mount namespace); else the process finds the volume's host path in $${env}`,
    });
    if (mount.readOnly === true) issues.push({ path: at("volumeMounts", index, "readOnly"), message: "enforced by the process runtime only where the mountPath is honoured" });
  });
}

/**
 * The host namespaces a pod may ask for, and a user namespace of its own. A process shares the
 * host's network, PID and IPC namespaces whatever the pod says (hostNetwork, hostPID and hostIPC
 * true are what it does anyway); the docker runtime honours hostNetwork, not hostPID or hostIPC.
 * Neither runtime makes a user namespace.
 */
function podNamespaceWarnings(spec: Record<string, unknown>, runtime: RuntimeName): Issue[] {
  const issues: Issue[] = [];
  if (runtime === "docker") {
    for (const field of ["hostPID", "hostIPC"] as const) {
      if (spec[field] === true) issues.push({ path: ["spec", field], message: `not honoured by the docker runtime: the pod's containers keep their own ${field === "hostPID" ? "process" : "IPC"} namespace` });
    }
  }
  if (spec.hostUsers === false) {
    issues.push({ path: ["spec", "hostUsers"], message: `not honoured by the ${runtime} runtime: the containers run in the host's user namespace, their root the host's root` });
  }
  return issues;
}

/** A process binds its ports on the host itself: a hostPort other than its containerPort maps nothing. */
function processPortWarnings(container: Record<string, unknown>, at: (...rest: (string | number)[]) => FieldPath, issues: Issue[]): void {
  const ports = Array.isArray(container.ports) ? container.ports : [];
  ports.forEach((port, index) => {
    if (!isPlainObject(port) || typeof port.hostPort !== "number" || port.hostPort === 0 || port.hostPort === port.containerPort) return;
    issues.push({ path: at("ports", index, "hostPort"), message: `not honoured by the process runtime: the process binds its own port on the host (containerPort ${String(port.containerPort)}); nothing maps hostPort ${port.hostPort} to it` });
  });
}

/** The docker runtime publishes no ports: a hostPort is not bound on the host. */
function dockerPortWarnings(container: Record<string, unknown>, at: (...rest: (string | number)[]) => FieldPath, issues: Issue[]): void {
  const ports = Array.isArray(container.ports) ? container.ports : [];
  ports.forEach((port, index) => {
    if (isPlainObject(port) && typeof port.hostPort === "number" && port.hostPort !== 0) {
      issues.push({ path: at("ports", index, "hostPort"), message: "not honoured by the docker runtime: no port is published on the host" });
    }
  });
}

/** `MINIKUBELET_VOLUME_<NAME>`: where a process finds a mounted volume (no mountPath remapping). */
export function volumeEnvName(volume: string): string {
  return `MINIKUBELET_VOLUME_${volume.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) return undefined;
  const child = value[key];
  return isPlainObject(child) ? child : undefined;
}
