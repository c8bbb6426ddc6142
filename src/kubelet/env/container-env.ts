/**
 * A container's environment as the kubelet's makeEnvironmentVariables builds it at each start:
 * envFrom first (every key of each ConfigMap or Secret, prefixed), then env in order, overriding
 * (`$(VAR)` in a value expanded against what is defined so far and the service variables;
 * `valueFrom` resolved: the downward API, a ConfigMap's or a Secret's key), then the service
 * variables no other variable set. A missing object or key fails the start with the kubelet's
 * message (CreateContainerConfigError) unless the reference is optional; then it is skipped.
 *
 * Without a source of objects (a static pod, or no cluster) there are no service variables, as in
 * a kubelet without an API server, and a reference to an object cannot be resolved.
 */
import type { ContainerSpec, EnvVar, PodSpec } from "../../manifest/types.ts";
import { resolveEnv, type DownwardFacts } from "./downward-values.ts";
import { expand } from "./env-expansion.ts";
import { serviceEnv } from "./service-env.ts";
import { notFoundMessage, type ConfigMapData, type Lookup, type PodObjectSource, type SecretData } from "../objects/pod-object-source.ts";

/** Why a container's env cannot be made now; the message is the container's waiting message. */
export class ContainerConfigError extends Error {
  override readonly name = "ContainerConfigError";
  /** Set while the source is still reading the object: the start waits quietly until then. */
  quietUntil?: number;
}

const textDecoder = new TextDecoder();

export function containerEnv(pod: PodSpec, container: ContainerSpec, facts: DownwardFacts, objects: PodObjectSource | undefined): EnvVar[] {
  const services = objects ? servicesFor(pod, objects) : new Map<string, string>();
  const configMaps = new Map<string, ConfigMapData | undefined>();
  const secrets = new Map<string, SecretData | undefined>();
  /** undefined: NotFound, which an optional reference skips. */
  const configMap = (name: string, optional: boolean) => fetchOnce(configMaps, name, "configMap", optional, objects, pod.namespace);
  const secret = (name: string, optional: boolean) => fetchOnce(secrets, name, "secret", optional, objects, pod.namespace);

  const defined = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    if (from.kind === "configMap") {
      const object = configMap(from.name, from.optional);
      for (const [key, value] of Object.entries(object?.data ?? {})) defined.set(from.prefix + key, value);
    } else {
      const object = secret(from.name, from.optional);
      for (const [key, value] of Object.entries(object?.data ?? {})) defined.set(from.prefix + key, textDecoder.decode(value));
    }
  }

  const downward = resolveEnv(pod, container, facts);
  container.env.forEach((variable, index) => {
    const from = variable.valueFrom;
    let value: string | undefined;
    if (variable.value !== "") {
      value = expand(variable.value, new Map([...services, ...defined]));
    } else if (from && "configMapKeyRef" in from) {
      const { name, key, optional } = from.configMapKeyRef;
      const object = configMap(name, optional);
      if (!object) return;
      value = object.data[key];
      if (value === undefined && !optional) throw new ContainerConfigError(`couldn't find key ${key} in ConfigMap ${pod.namespace}/${name}`);
    } else if (from && "secretKeyRef" in from) {
      const { name, key, optional } = from.secretKeyRef;
      const object = secret(name, optional);
      if (!object) return;
      const bytes = object.data[key];
      if (bytes === undefined && !optional) throw new ContainerConfigError(`couldn't find key ${key} in Secret ${pod.namespace}/${name}`);
      value = bytes && textDecoder.decode(bytes);
    } else {
      value = downward[index]!.value;
    }
    if (value !== undefined) defined.set(variable.name, value);
  });

  const env: EnvVar[] = [...defined].map(([name, value]) => ({ name, value }));
  for (const [name, value] of services) if (!defined.has(name)) env.push({ name, value });
  return env;
}

function servicesFor(pod: PodSpec, objects: PodObjectSource): Map<string, string> {
  const services = objects.services();
  // The kubelet waits for one listing before a cluster pod's env: KUBERNETES_SERVICE_HOST is what
  // in-cluster clients read. A static pod does not wait (it may run before the API server does).
  if (!services && !pod.fromCluster) return new Map();
  if (!services) throw new ContainerConfigError("services have not yet been read at least once, cannot construct envvars");
  const spec = (pod.manifest.spec ?? {}) as Record<string, unknown>;
  return serviceEnv(services, pod.namespace, spec.enableServiceLinks !== false);
}

function fetchOnce<T>(
  seen: Map<string, T | undefined>,
  name: string,
  kind: "configMap" | "secret",
  optional: boolean,
  objects: PodObjectSource | undefined,
  namespace: string,
): T | undefined {
  if (seen.has(name)) return seen.get(name);
  if (!objects) throw new ContainerConfigError(`couldn't get ${kind} ${namespace}/${name}, no kubeClient defined`);
  const lookup = (kind === "configMap" ? objects.configMap(namespace, name) : objects.secret(namespace, name)) as Lookup<T>;
  if (lookup.state === "unavailable") {
    const error = new ContainerConfigError(lookup.message);
    if (lookup.quietUntil !== undefined) error.quietUntil = lookup.quietUntil;
    throw error;
  }
  if (lookup.state === "notFound") {
    if (!optional) throw new ContainerConfigError(notFoundMessage(kind, name));
    return undefined;
  }
  seen.set(name, lookup.object);
  return lookup.object;
}
