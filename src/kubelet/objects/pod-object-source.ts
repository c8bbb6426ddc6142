/**
 * What a pod may reference beyond itself, as the loop reads it: ConfigMaps and Secrets of its
 * namespace (env, envFrom, volumes), the Services whose addresses its containers' env shows, and
 * ServiceAccount tokens bound to it. The kubelet's configmap and secret managers, service lister and
 * token manager sit behind it. One implementation per place the objects live: the cluster's (a
 * watch-based cache through the node's credentials, src/node/pod-object-cache.ts) and, later, the
 * agent's own store.
 *
 * Lookups are synchronous reads of what the source holds: the loop never waits on an API server.
 * An object not read yet is `unavailable` (the container waits, CreateContainerConfigError, or the
 * volume is not set up); when it arrives, `onChange` says so and the loop syncs the pods that
 * reference it again.
 */
import type { PodSpec } from "../../manifest/types.ts";

export interface ConfigMapData {
  data: Readonly<Record<string, string>>;
  binaryData: Readonly<Record<string, Uint8Array>>;
}

export interface SecretData {
  data: Readonly<Record<string, Uint8Array>>;
}

/**
 * A lookup's answer: the object, its absence (the API server said NotFound: an `optional`
 * reference is then skipped), or why it cannot be told yet (not read yet, forbidden, unreachable),
 * in the message the kubelet's manager would return.
 */
export type Lookup<T> =
  | { state: "found"; object: T }
  | { state: "notFound" }
  /**
   * `quietUntil`: the source expects to know by then (a first listing under way); until then the
   * loop waits without a word, as the kubelet's managers wait up to a second for their cache to
   * sync, and the answer's arrival wakes the pod. Past it, `message` is what the pod reports.
   */
  | { state: "unavailable"; message: string; quietUntil?: number };

/** What the service env variables are made of (getServiceEnvVarMap). */
export interface ServiceInfo {
  namespace: string;
  name: string;
  /** "" or "None": no variables. */
  clusterIP: string;
  ports: readonly { name?: string; port: number; protocol?: string }[];
}

/** A TokenRequest for a pod's ServiceAccount, bound to the pod. */
export interface TokenRequestInput {
  namespace: string;
  serviceAccount: string;
  podName: string;
  podUid: string;
  /** Empty: the API server's own audiences. */
  audiences: readonly string[];
  expirationSeconds: number;
}

export interface IssuedToken {
  token: string;
  /** status.expirationTimestamp, epoch ms (the API server may have extended what was asked). */
  expiresAt: number;
}

/** What changed: a ConfigMap or Secret (created, edited, deleted) or the Services. */
export type ObjectChange = { kind: "configMap" | "secret"; namespace: string; name: string } | { kind: "services" };

export interface PodObjectSource {
  /**
   * Starts (or keeps) reading the objects this pod references (the managers' RegisterPod); a pod
   * registered again with another spec replaces its references. Lookups of an object no registered
   * pod references are `unavailable`.
   */
  registerPod(pod: PodSpec): void;
  unregisterPod(uid: string): void;
  configMap(namespace: string, name: string): Lookup<ConfigMapData>;
  secret(namespace: string, name: string): Lookup<SecretData>;
  /** Every Service the source knows, any namespace; undefined until they were read once. */
  services(): readonly ServiceInfo[] | undefined;
  /** Asks for a token (the one call that goes out): the caller caches and refreshes it (token-cache.ts). */
  serviceAccountToken(request: TokenRequestInput): Promise<IssuedToken>;
  onChange(listener: (change: ObjectChange) => void): () => void;
}

/** The apimachinery NotFound message the kubelet's managers return (`configmap "x" not found`). */
export function notFoundMessage(kind: "configMap" | "secret", name: string): string {
  return `${kind === "configMap" ? "configmap" : "secret"} ${JSON.stringify(name)} not found`;
}

/** The references of a pod, by kind, as namespaced names: what registerPod watches and what a change wakes. */
export function podObjectNames(pod: PodSpec): { configMaps: Set<string>; secrets: Set<string> } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const add = (kind: "configMap" | "secret", name: string) => (kind === "configMap" ? configMaps : secrets).add(name);
  for (const container of [...pod.initContainers, ...pod.containers, ...(pod.ephemeralContainers ?? [])]) {
    for (const from of container.envFrom ?? []) add(from.kind, from.name);
    for (const env of container.env) {
      const source = env.valueFrom;
      if (source && "configMapKeyRef" in source) add("configMap", source.configMapKeyRef.name);
      if (source && "secretKeyRef" in source) add("secret", source.secretKeyRef.name);
    }
  }
  for (const volume of pod.volumes) {
    if (volume.type === "configMap" || volume.type === "secret") add(volume.type, volume.source.name);
    if (volume.type !== "projected") continue;
    for (const projection of volume.sources) if (projection.kind === "configMap" || projection.kind === "secret") add(projection.kind, projection.source.name);
  }
  return { configMaps, secrets };
}
