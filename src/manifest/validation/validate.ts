/**
 * Turns a decoded manifest into a PodSpec the way the API server would admit it: every problem is
 * collected with its field path (not just the first), and the API's defaults are filled in.
 * Pure: no I/O; the file name is only used in messages.
 */
import { checkAffinity, checkTolerations } from "./validate-scheduling.ts";
import { checkHostAliases } from "./validate-host-aliases.ts";
import { API_POD_SOURCE, type ContainerSpec, type PodSpec, type RestartPolicy, type Volume } from "../types.ts";
import { IssueList, ManifestError, type Issue } from "../errors.ts";
import { isPlainObject, describeValue, objectAt, type Fields } from "../fields.ts";
import { checkAnnotationsSize, checkDns1123Label, checkDns1123Subdomain, checkLabelValue, checkQualifiedName } from "../names.ts";
import { validateContainer, type ContainerKind } from "./validate-container.ts";
import { readDownwardAPIVolume } from "./validate-downward.ts";
import { readObjectVolume, readProjectedVolume } from "./validate-api-objects.ts";
import { configHash, podUid } from "../hash.ts";
import { applyPodDefaults, DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from "../defaults.ts";
import { withoutUnknownFields } from "../known-fields.ts";
import { readPodOS, type PodOS } from "./validate-stop-signal.ts";
import { readEmptyDir } from "./validate-empty-dir.ts";
import { validatePodResources } from "./validate-resources.ts";
import { absolutePathProblem } from "./absolute-path.ts";
import { staticReferenceRefusal, volumeObjectReference } from "./api-object-reference.ts";

export const DEFAULT_NAMESPACE = "default";
const HOST_PATH_TYPES = ["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"] as const;
const SUPPORTED_VOLUME_SOURCES = ["emptyDir", "hostPath", "downwardAPI"] as const;

export interface ValidateContext {
  /** The file as it appears in messages, e.g. `web.yaml`. */
  file: string;
  /** The absolute path of the file: recorded as PodSpec.source and hashed into the UID. */
  source: string;
  /** Node name ("" for none); pods are named NAME-NODE when set. */
  node: string;
  /**
   * Whether `spec.ephemeralContainers` may be set: only on a pod already running, which an API
   * pod's stored object is once `kubectl debug` added one. A pod being created (a file, a POST) may
   * not have any, as the API server's ValidatePodCreate says.
   */
  ephemeralContainers?: "allowed" | "refused";
  /**
   * Whether the pod may reference ConfigMaps, Secrets and ServiceAccount tokens: a pod an API
   * server admitted, the cluster's or the agent's own (the kubelet refuses them in a static pod),
   * whose ServiceAccount admission mounted its token; a static pod that names a ServiceAccount is told it runs without.
   * Default: refused.
   */
  apiObjects?: "allowed" | "refused";
}

/** `NAME-NODE` when a node is set (mirror-pod naming), else NAME. */
export function fullPodName(name: string, node: string): string {
  return node ? `${name}-${node}` : name;
}

/** Why a node name cannot be used (it becomes part of every pod name), or undefined. */
export function checkNodeName(node: string): string | undefined {
  return node === "" ? undefined : checkDns1123Subdomain(node);
}

/**
 * Validates `raw` (the decoded file) as a v1 Pod.
 * @throws ManifestError listing every issue found, each with its field path.
 */
export function validatePod(raw: unknown, context: ValidateContext): PodSpec {
  const { pod, issues } = readPod(raw, context);
  if (!pod || issues.length > 0) throw new ManifestError(context.file, issues);
  return pod;
}

/**
 * Reads `raw` as far as it goes: the pod with defaults where a field was refused (so further rules,
 * such as a runtime's, can still be checked), and every issue found. No pod when `raw` is no object.
 */
export function readPod(raw: unknown, context: ValidateContext): { pod?: PodSpec; issues: Issue[] } {
  const issues = new IssueList();
  if (!isPlainObject(raw)) return { issues: [{ path: [], message: `must be a Pod object (found ${describeValue(raw)})` }] };
  // Decoded as the API server decodes a pod before it validates one: unknown fields dropped (a
  // warning names each), defaults applied. What is validated is what is stored and served.
  const decoded = applyPodDefaults(withoutUnknownFields(raw)) as Record<string, unknown>;
  const root = objectAt(decoded, [], issues)!;
  checkKind(root);

  const metadata = root.object("metadata");
  if (!metadata && !root.has("metadata")) root.fail("metadata", "required");
  const name = readName(metadata, context.node);
  const namespace = readNamespace(metadata);
  const labels = readStringMap(metadata, "labels", true);
  const annotations = readStringMap(metadata, "annotations", false);

  const spec = root.object("spec");
  if (!spec && !root.has("spec")) root.fail("spec", "required");
  const apiObjects = context.apiObjects === "allowed";
  // Mounts are checked against every declared volume, as the API server checks them: a refused
  // volume is one refusal, not one more for each of its mounts.
  const { volumes, declared: volumeNames } = spec ? readVolumes(spec, apiObjects, context.source !== API_POD_SOURCE) : { volumes: [], declared: new Set<string>() };
  // Read before the containers: a hook's sleep may not outlast it.
  const terminationGracePeriodSeconds =
    spec?.int("terminationGracePeriodSeconds", { min: 0, default: DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS }) ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  const os = spec ? readPodOS(spec) : null;
  const initContainers = spec ? readContainers(spec, "initContainers", "init", volumeNames, terminationGracePeriodSeconds, os, apiObjects) : [];
  const containers = spec ? readContainers(spec, "containers", "app", volumeNames, terminationGracePeriodSeconds, os, apiObjects) : [];
  const ephemeralContainers = spec ? readEphemeralContainers(spec, context, volumeNames, [...initContainers, ...containers]) : [];
  if (spec && !spec.has("containers")) spec.fail("containers", "required: a pod needs at least one container");
  else if (spec && Array.isArray(spec.raw("containers")) && (spec.raw("containers") as unknown[]).length === 0) {
    spec.fail("containers", "must have at least one container");
  }
  if (spec) checkUniqueContainerNames(spec, initContainers, containers, ephemeralContainers);
  const restartPolicy = spec?.oneOf<RestartPolicy>("restartPolicy", ["Always", "OnFailure", "Never"], "Always") ?? "Always";
  // The API server's bounds: 1 to math.MaxInt32.
  const activeDeadlineSeconds = spec?.has("activeDeadlineSeconds") ? spec.int("activeDeadlineSeconds", { min: 1, max: 2_147_483_647, default: 1 }) : undefined;
  const podResources = spec ? validatePodResources(spec, containers, initContainers, os === "windows") : undefined;
  if (spec) {
    checkTolerations(spec);
    checkAffinity(spec);
    checkHostAliases(spec);
  }
  const hostNetwork = spec?.bool("hostNetwork", false) ?? false;
  const shareProcessNamespace = spec?.bool("shareProcessNamespace", false) ?? false;

  const fullName = fullPodName(name, context.node);
  const pod: PodSpec = {
    key: `${namespace}/${fullName}`,
    namespace,
    name,
    fullName,
    node: context.node,
    uid: podUid(context.node, context.source, raw),
    configHash: configHash(raw, context.node),
    source: context.source,
    labels,
    annotations,
    restartPolicy,
    terminationGracePeriodSeconds,
    ...(activeDeadlineSeconds !== undefined && { activeDeadlineSeconds }),
    ...(podResources && { resources: podResources }),
    initContainers,
    containers,
    ephemeralContainers,
    volumes,
    hostNetwork,
    shareProcessNamespace,
    ...(apiObjects && { fromCluster: true as const }),
    // The uid and the config hash stay those of what was written, so a restart of an agent that
    // defaults differently does not take a running pod for a changed one.
    manifest: decoded,
  };
  return { pod, issues: issues.items };
}

function checkKind(root: Fields): void {
  const apiVersion = root.string("apiVersion");
  if (!root.has("apiVersion")) root.fail("apiVersion", 'required (must be "v1")');
  else if (apiVersion !== undefined && apiVersion !== "v1") root.fail("apiVersion", `must be "v1" (found ${JSON.stringify(apiVersion)})`);
  const kind = root.string("kind");
  if (!root.has("kind")) root.fail("kind", 'required (must be "Pod")');
  else if (kind !== undefined && kind !== "Pod") root.fail("kind", `must be "Pod" (found ${JSON.stringify(kind)}); only Pods can be static pods`);
}

function readName(metadata: Fields | undefined, node: string): string {
  if (!metadata) return "";
  if (!metadata.has("name") && metadata.string("generateName")) {
    // The kubelet would run it as "-NODE" and refuse that name; say what the user meant instead.
    metadata.fail("name", `required: a static pod is named by metadata.name; generateName names only pods created through the agent's API (kubectl create -f FILE)`);
    return "";
  }
  const name = metadata.requiredString("name");
  if (name === "") return name;
  const problem = checkDns1123Subdomain(name) ?? checkDns1123Subdomain(fullPodName(name, node));
  if (problem) metadata.fail("name", node && !checkDns1123Subdomain(name) ? `with node ${JSON.stringify(node)}: ${problem}` : problem);
  return name;
}

function readNamespace(metadata: Fields | undefined): string {
  const namespace = metadata?.string("namespace") || DEFAULT_NAMESPACE;
  const problem = checkDns1123Label(namespace);
  if (problem) metadata!.fail("namespace", problem);
  return namespace;
}

function readStringMap(metadata: Fields | undefined, key: string, isLabels: boolean): Record<string, string> {
  if (!metadata) return {};
  const map = metadata.stringMap(key);
  for (const [name, value] of Object.entries(map)) {
    const problem = checkQualifiedName(name) ?? (isLabels ? checkLabelValue(value) : undefined);
    if (problem) metadata.issues.add([...metadata.at(key), name], problem);
  }
  const tooLong = isLabels ? undefined : checkAnnotationsSize(map);
  if (tooLong) metadata.issues.add(metadata.at(key), tooLong);
  return map;
}

function readContainers(spec: Fields, key: string, kind: ContainerKind, volumeNames: ReadonlySet<string>, gracePeriodSeconds?: number, os: PodOS = null, apiObjects = false): ContainerSpec[] {
  return spec.objectList(key).map((fields) => validateContainer(fields, { kind, volumeNames, os, apiObjects, ...(gracePeriodSeconds !== undefined && { gracePeriodSeconds }) }));
}

/**
 * The ephemeral containers, where the pod may have them: each names an unused container name and,
 * with targetContainerName, a container or init container of the pod.
 */
function readEphemeralContainers(spec: Fields, context: ValidateContext, volumeNames: ReadonlySet<string>, others: readonly ContainerSpec[]): ContainerSpec[] {
  if (!spec.has("ephemeralContainers")) return [];
  const raw = spec.raw("ephemeralContainers");
  if ((context.ephemeralContainers ?? "refused") === "refused") {
    if (!Array.isArray(raw) || raw.length > 0) spec.fail("ephemeralContainers", "Forbidden: cannot be set on create");
    return [];
  }
  const containers = readContainers(spec, "ephemeralContainers", "ephemeral", volumeNames);
  const names = new Set(others.map((container) => container.name));
  containers.forEach((container, index) => {
    const target = container.targetContainerName;
    if (target !== undefined && !names.has(target)) spec.issues.add([...spec.path, "ephemeralContainers", index, "targetContainerName"], `Not found: ${JSON.stringify(target)}`);
  });
  return containers;
}

/** Names are unique across init, app and ephemeral containers: they key logs, restarts and back-off. */
function checkUniqueContainerNames(spec: Fields, init: ContainerSpec[], app: ContainerSpec[], ephemeral: ContainerSpec[]): void {
  const firstSeen = new Map<string, string>();
  const all = [
    ...init.map((container, index) => ({ container, where: `initContainers[${index}]`, path: ["initContainers", index] as const })),
    ...app.map((container, index) => ({ container, where: `containers[${index}]`, path: ["containers", index] as const })),
    ...ephemeral.map((container, index) => ({ container, where: `ephemeralContainers[${index}]`, path: ["ephemeralContainers", index] as const })),
  ];
  for (const { container, where, path } of all) {
    if (container.name === "") continue;
    const previous = firstSeen.get(container.name);
    if (previous) {
      spec.issues.add([...spec.path, ...path, "name"], `duplicate container name ${JSON.stringify(container.name)} (also spec.${previous}.name)`);
    } else {
      firstSeen.set(container.name, where);
    }
  }
}

/**
 * `apiObjects`: a pod of the cluster, whose configMap, secret and projected volumes are read;
 * `isStatic`: a manifest file's pod, which the kubelet refuses outright when it references API objects.
 */
function readVolumes(spec: Fields, apiObjects: boolean, isStatic: boolean): { volumes: Volume[]; declared: ReadonlySet<string> } {
  const volumes: Volume[] = [];
  const names = new Set<string>();
  for (const item of spec.objectList("volumes")) {
    const name = item.requiredString("name");
    const problem = name === "" ? undefined : checkDns1123Label(name);
    if (problem) item.fail("name", problem);
    else if (names.has(name)) item.fail("name", `duplicate volume name ${JSON.stringify(name)}`);
    names.add(name);
    const sources = Object.keys(item.obj).filter((key) => key !== "name" && item.has(key));
    if (sources.length !== 1) {
      item.fail(undefined, `needs exactly one volume source, ${SUPPORTED_VOLUME_SOURCES.slice(0, -1).join(", ")} or ${SUPPORTED_VOLUME_SOURCES.at(-1)} (found ${sources.join(", ") || "none"})`);
      continue;
    }
    const source = sources[0]!;
    if (source === "emptyDir") {
      volumes.push(readEmptyDir(item, name));
    } else if (source === "hostPath") {
      const hostPath = item.object("hostPath");
      if (!hostPath) continue;
      const path = hostPath.requiredString("path");
      const pathProblem = absolutePathProblem(path);
      if (pathProblem) hostPath.fail("path", pathProblem);
      const hostPathType = hostPath.oneOf("type", HOST_PATH_TYPES, "");
      volumes.push({ name, type: "hostPath", path, hostPathType });
    } else if (source === "downwardAPI") {
      const downwardAPI = item.object("downwardAPI");
      if (downwardAPI) volumes.push(readDownwardAPIVolume(name, downwardAPI));
    } else if (apiObjects && (source === "configMap" || source === "secret")) {
      const fields = item.object(source);
      if (fields) volumes.push(readObjectVolume(name, source, fields));
    } else if (source === "projected" && (apiObjects || !volumeObjectReference(source, item.obj[source]))) {
      // Any pod's projected volume may hold downwardAPI sources alone, as the kubelet allows a static pod's.
      const fields = item.object(source);
      if (fields) volumes.push(readProjectedVolume(name, fields));
    } else {
      const reference = isStatic ? volumeObjectReference(source, item.obj[source]) : undefined;
      const supported = isStatic ? "static pods support only emptyDir, hostPath and downwardAPI" : "minikubelet mounts only emptyDir, hostPath and downwardAPI volumes";
      item.fail(source, reference ? staticReferenceRefusal(reference) : `${source} volumes are not supported: ${supported}`);
    }
  }
  return { volumes, declared: names };
}
