/**
 * One container (init or app): names, image and pull policy, command, env, ports, volume mounts,
 * stdin and terminal, resources, restart policy and rules, probes and the lifecycle hooks, with the
 * API server's defaults filled in.
 */
import { CREATE_THROUGH_THE_API } from "./api-object-reference.ts";
import type { ContainerPort, ContainerResizePolicy, ContainerSpec, EnvVar, ProbeKind, PullPolicy, VolumeMount } from "../types.ts";
import { describeValue, Fields } from "../fields.ts";
import { checkDns1123Label, checkEnvVarName, checkPortName } from "../names.ts";
import { validateLifecycleHandler, validateProbe, type PortScope } from "./validate-probe.ts";
import { validateResources } from "./validate-resources.ts";
import { absolutePathProblem } from "./absolute-path.ts";
import { readEnvVarSource } from "./validate-downward.ts";
import { readEnvFrom } from "./validate-api-objects.ts";
import { defaultPullPolicy, DEFAULT_TERMINATION_MESSAGE_PATH } from "../defaults.ts";
import { readContainerRestart } from "./validate-restart-policy.ts";
import { readStopSignal, type PodOS } from "./validate-stop-signal.ts";

export type ContainerKind = "init" | "app" | "ephemeral";

/**
 * What an ephemeral container may not have, by the field's JSON name, and the key the API server
 * names it by (validateEphemeralContainers lower-cases the Go field name: `livenessprobe`).
 */
const NOT_FOR_EPHEMERAL: readonly (readonly [field: string, key: string])[] = [
  ["lifecycle", "lifecycle"],
  ["livenessProbe", "livenessprobe"],
  ["ports", "ports"],
  ["readinessProbe", "readinessprobe"],
  ["resources", "resources"],
  ["startupProbe", "startupprobe"],
  ["restartPolicy", "restartPolicy"],
  ["restartPolicyRules", "restartpolicyrules"],
];

export interface ContainerContext {
  kind: ContainerKind;
  /** Names declared in spec.volumes, which volumeMounts must reference. */
  volumeNames: ReadonlySet<string>;
  /** The pod's terminationGracePeriodSeconds, which a hook's sleep may not exceed; unset: not checked. */
  gracePeriodSeconds?: number;
  /** `spec.os.name` (null: no spec.os), which a stop signal needs; absent reads as no spec.os. */
  os?: PodOS;
  /** A pod of the cluster: env and envFrom may reference ConfigMaps and Secrets. */
  apiObjects?: boolean;
}

const PROBE_FIELDS: readonly [string, ProbeKind][] = [
  ["startupProbe", "startup"],
  ["livenessProbe", "liveness"],
  ["readinessProbe", "readiness"],
];

export function validateContainer(fields: Fields, context: ContainerContext): ContainerSpec {
  if (context.kind === "ephemeral") return validateEphemeralContainer(fields, context);
  const name = fields.requiredString("name");
  const nameProblem = name === "" ? undefined : checkDns1123Label(name);
  if (nameProblem) fields.fail("name", nameProblem);

  const image = fields.requiredString("image");
  if (image !== image.trim()) fields.fail("image", `must not have leading or trailing whitespace (found ${JSON.stringify(image)})`);

  const ports = readPorts(fields);
  const container: ContainerSpec = {
    name,
    image,
    imagePullPolicy: fields.oneOf("imagePullPolicy", ["Always", "IfNotPresent", "Never"] as const, defaultPullPolicy(image)),
    command: fields.stringList("command"),
    args: fields.stringList("args"),
    env: readEnv(fields, context.apiObjects === true),
    ports,
    volumeMounts: readVolumeMounts(fields, context.volumeNames),
    // The kubelet's MakeAbsolutePath: a relative path is taken from the container's root, as the API server lets it through.
    terminationMessagePath: absoluteFromRoot(fields.string("terminationMessagePath") || DEFAULT_TERMINATION_MESSAGE_PATH),
  };
  if (fields.oneOf("terminationMessagePolicy", ["File", "FallbackToLogsOnError"] as const, "File") === "FallbackToLogsOnError") {
    container.terminationMessagePolicy = "FallbackToLogsOnError";
  }
  const workingDir = fields.string("workingDir");
  if (workingDir) container.workingDir = workingDir;
  // Set only when true: a spec recorded before these were read reads the same as one without them.
  for (const key of ["stdin", "stdinOnce", "tty"] as const) if (fields.bool(key, false)) container[key] = true;
  if (fields.has("envFrom") && context.apiObjects) {
    const envFrom = readEnvFrom(fields);
    if (envFrom.length > 0) container.envFrom = envFrom;
  } else if (fields.has("envFrom")) {
    fields.fail("envFrom", `not supported: static pods cannot reference ConfigMaps or Secrets: ${CREATE_THROUGH_THE_API}`);
  }

  const resources = validateResources(fields);
  if (resources) container.resources = resources;
  const resizePolicy = readResizePolicy(fields);
  if (resizePolicy.length > 0) container.resizePolicy = resizePolicy;

  Object.assign(container, readContainerRestart(fields));
  // Probes and hooks on a plain init container would never run: it must exit for the pod to go on.
  const mayHaveProbes = context.kind === "app" || container.restartPolicy === "Always";
  const scope: PortScope = { ports, path: fields.at("ports") };
  for (const [key, kind] of PROBE_FIELDS) {
    if (!fields.has(key)) continue;
    if (!mayHaveProbes) {
      fields.fail(key, "may not be set for init containers without restartPolicy: Always");
      continue;
    }
    const probeFields = fields.object(key);
    const probe = probeFields && validateProbe(probeFields, kind, scope);
    if (probe) container[`${kind}Probe`] = probe;
  }
  readLifecycle(fields, scope, mayHaveProbes, container, context.gracePeriodSeconds, context.os ?? null);
  return container;
}

/**
 * An ephemeral container (`kubectl debug`): a container to look inside a running pod with, so no
 * ports, probes, hooks, resources or restart policy (the API server's validateEphemeralContainers),
 * and `targetContainerName` naming a container whose processes it shares (checked by the pod).
 */
function validateEphemeralContainer(fields: Fields, context: ContainerContext): ContainerSpec {
  for (const [field, key] of NOT_FOR_EPHEMERAL) {
    const value = fields.raw(field);
    // `resources: {}` is the struct's zero value, which the API's defaulting writes on every container.
    const empty = typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
    if (value !== undefined && !(empty && field === "resources") && !(Array.isArray(value) && value.length === 0)) {
      fields.issues.add(fields.at(key), "Forbidden: cannot be set for an Ephemeral Container");
    }
  }
  const container = validateContainer(withoutFields(fields, NOT_FOR_EPHEMERAL.map(([field]) => field)), { ...context, kind: "app" });
  const target = fields.string("targetContainerName");
  if (target) container.targetContainerName = target;
  return container;
}

function absoluteFromRoot(path: string): string {
  return path.startsWith("/") ? path : `/${path}`;
}

/** The same object without `keys`, for what was already refused not to be read (and refused) twice. */
function withoutFields(fields: Fields, keys: readonly string[]): Fields {
  const rest = Object.fromEntries(Object.entries(fields.obj).filter(([key]) => !keys.includes(key) && key !== "targetContainerName"));
  return new Fields(rest, fields.path, fields.issues);
}

/** postStart and preStop, each checked as the API server's validateLifecycle checks both, and the stop signal. */
function readLifecycle(fields: Fields, scope: PortScope, allowed: boolean, container: ContainerSpec, gracePeriodSeconds: number | undefined, os: PodOS): void {
  const lifecycle = fields.object("lifecycle");
  if (!lifecycle) return;
  if (!allowed) {
    fields.fail("lifecycle", "may not be set for init containers without restartPolicy: Always");
    return;
  }
  for (const key of ["postStart", "preStop"] as const) {
    const hook = lifecycle.object(key);
    const handler = hook && validateLifecycleHandler(hook, scope, gracePeriodSeconds);
    if (handler) container[key] = handler;
  }
  const stopSignal = readStopSignal(lifecycle, os);
  if (stopSignal) container.stopSignal = stopSignal;
}

function readEnv(fields: Fields, apiObjects: boolean): EnvVar[] {
  const env: EnvVar[] = [];
  for (const item of fields.objectList("env")) {
    const name = item.requiredString("name");
    const problem = name === "" ? undefined : checkEnvVarName(name);
    if (problem) item.fail("name", problem);
    const raw = item.raw("value");
    if (raw !== undefined && typeof raw !== "string") {
      item.fail("value", `must be a string (found ${describeValue(raw)}); quote it`);
      continue;
    }
    const valueFrom = readEnvVarSource(item, raw ?? "", apiObjects);
    env.push(valueFrom ? { name, value: "", valueFrom } : { name, value: raw ?? "" });
  }
  return env;
}

/** resizePolicy as the API server's validateResizePolicy reads it: cpu or memory, each once, with a policy. */
function readResizePolicy(fields: Fields): ContainerResizePolicy[] {
  const policies: ContainerResizePolicy[] = [];
  for (const item of fields.objectList("resizePolicy")) {
    if (!item.has("resourceName")) item.fail("resourceName", "Required value");
    if (!item.has("restartPolicy")) item.fail("restartPolicy", "Required value");
    // An invalid value is refused with the manifest; the fallback is never run.
    const resourceName = item.oneOf("resourceName", ["cpu", "memory"] as const, "cpu");
    const restartPolicy = item.oneOf("restartPolicy", ["NotRequired", "RestartContainer"] as const, "NotRequired");
    if (policies.some((policy) => policy.resourceName === resourceName)) item.fail("resourceName", `Duplicate value: ${JSON.stringify(resourceName)}`);
    else policies.push({ resourceName, restartPolicy });
  }
  return policies;
}

function readPorts(fields: Fields): ContainerPort[] {
  const ports: ContainerPort[] = [];
  const seen = new Set<string>();
  for (const item of fields.objectList("ports")) {
    if (!item.has("containerPort")) item.fail("containerPort", "required");
    const port: ContainerPort = {
      containerPort: item.int("containerPort", { min: 1, max: 65535, default: 0 }),
      protocol: item.oneOf("protocol", ["TCP", "UDP", "SCTP"] as const, "TCP"),
    };
    item.int("hostPort", { min: 0, max: 65535, default: 0 });
    const name = item.string("name");
    if (name !== undefined && name !== "") {
      const problem = checkPortName(name);
      if (problem) item.fail("name", problem);
      else if (seen.has(name)) item.fail("name", `duplicate port name ${JSON.stringify(name)}`);
      seen.add(name);
      port.name = name;
    }
    ports.push(port);
  }
  return ports;
}

function readVolumeMounts(fields: Fields, volumeNames: ReadonlySet<string>): VolumeMount[] {
  const mounts: VolumeMount[] = [];
  const paths = new Set<string>();
  for (const item of fields.objectList("volumeMounts")) {
    const name = item.requiredString("name");
    if (name !== "" && !volumeNames.has(name)) {
      item.fail("name", `no volume named ${JSON.stringify(name)} in spec.volumes`);
    }
    const mountPath = item.requiredString("mountPath");
    const pathProblem = absolutePathProblem(mountPath);
    if (pathProblem) {
      item.fail("mountPath", pathProblem);
    } else if (paths.has(mountPath)) {
      item.fail("mountPath", `${JSON.stringify(mountPath)} is mounted twice`);
    }
    paths.add(mountPath);
    const mount: VolumeMount = { name, mountPath, readOnly: item.bool("readOnly", false) };
    const subPath = item.string("subPath");
    if (subPath) {
      if (subPath.startsWith("/") || subPath.split("/").includes("..")) {
        item.fail("subPath", `must be a relative path without '..' (found ${JSON.stringify(subPath)})`);
      }
      mount.subPath = subPath;
    }
    mounts.push(mount);
  }
  return mounts;
}
