/**
 * The cluster's side of the objects a node's pods reference (the kubelet's watch-based configmap
 * and secret managers, its service lister and the TokenRequest call), read with the node's
 * credentials: each ConfigMap and Secret referenced by a registered pod is watched by name (the
 * Node authorizer lets a node read exactly those of the pods bound to it), for as long as some pod
 * references it; the Services of the cluster are listed and watched once started. Lookups read what
 * the watches hold, at once; each change is announced, so the loop syncs the pods concerned.
 *
 * A failure (forbidden, unreachable) leaves the last object known in place, and is logged once per
 * object and message, not per retry.
 */
import type { Clock } from "../clock.ts";
import type { PodSpec } from "../manifest/types.ts";
import {
  podObjectNames,
  type ConfigMapData,
  type IssuedToken,
  type Lookup,
  type ObjectChange,
  type PodObjectSource,
  type SecretData,
  type ServiceInfo,
  type TokenRequestInput,
} from "../kubelet/objects/pod-object-source.ts";
import type { ClusterApi, ClusterApiError } from "./cluster-client.ts";
import { runObjectWatch } from "./object-watch.ts";

type Kind = "configMap" | "secret";

interface Watched {
  kind: Kind;
  namespace: string;
  name: string;
  /** The pods referencing it. */
  pods: Set<string>;
  lookup: Lookup<ConfigMapData | SecretData>;
  stop: () => void;
}

export interface PodObjectCacheOptions {
  client: ClusterApi;
  clock: Clock;
  log: (message: string) => void;
}

const RESOURCE: Record<Kind, string> = { configMap: "configmaps", secret: "secrets" };
/** How long the kubelet's managers wait for a new object's first listing before they report it missing. */
const FIRST_SYNC_WAIT_MS = 1000;

export class PodObjectCache implements PodObjectSource {
  private readonly watched = new Map<string, Watched>();
  private readonly podRefs = new Map<string, string[]>();
  private readonly listeners = new Set<(change: ObjectChange) => void>();
  private serviceList?: Map<string, ServiceInfo>;
  private stopServices?: () => void;
  private lastServiceFailure?: string;
  /** Set while the API server cannot be reached: one line when it goes, one when it is back, whatever the number of watches. */
  private unreachable = false;

  constructor(private readonly options: PodObjectCacheOptions) {}

  /** Starts the Services' watch (the pods' references are watched as they are registered). */
  start(): void {
    if (this.stopServices) return;
    this.stopServices = runObjectWatch<Record<string, any>>({
      client: this.options.client,
      clock: this.options.clock,
      path: "/api/v1/services",
      handlers: {
        listed: (items) => {
          this.reached();
          this.lastServiceFailure = undefined;
          this.serviceList = new Map(items.map((item) => [serviceKey(item), serviceInfo(item)]));
          this.announce({ kind: "services" });
        },
        event: ({ type, object }) => {
          this.serviceList ??= new Map();
          if (type === "DELETED") this.serviceList.delete(serviceKey(object));
          else this.serviceList.set(serviceKey(object), serviceInfo(object));
          this.announce({ kind: "services" });
        },
        failed: (error, verb) => {
          if (this.unreachableNow(error) || this.lastServiceFailure === error.message) return;
          this.lastServiceFailure = error.message;
          this.options.log(`node objects: ${describeFailure(verb, "services", error)}`);
        },
      },
    });
  }

  stop(): void {
    this.stopServices?.();
    this.stopServices = undefined;
    for (const entry of this.watched.values()) entry.stop();
    this.watched.clear();
    this.podRefs.clear();
  }

  registerPod(pod: PodSpec): void {
    const names = podObjectNames(pod);
    const keys = [...[...names.configMaps].map((name) => objectKey("configMap", pod.namespace, name)), ...[...names.secrets].map((name) => objectKey("secret", pod.namespace, name))];
    const before = this.podRefs.get(pod.uid) ?? [];
    this.podRefs.set(pod.uid, keys);
    for (const key of keys) this.reference(key, pod.uid);
    for (const key of before) if (!keys.includes(key)) this.release(key, pod.uid);
  }

  unregisterPod(uid: string): void {
    for (const key of this.podRefs.get(uid) ?? []) this.release(key, uid);
    this.podRefs.delete(uid);
  }

  configMap(namespace: string, name: string): Lookup<ConfigMapData> {
    return this.lookup("configMap", namespace, name) as Lookup<ConfigMapData>;
  }

  secret(namespace: string, name: string): Lookup<SecretData> {
    return this.lookup("secret", namespace, name) as Lookup<SecretData>;
  }

  services(): readonly ServiceInfo[] | undefined {
    return this.serviceList && [...this.serviceList.values()];
  }

  async serviceAccountToken(request: TokenRequestInput): Promise<IssuedToken> {
    const answer = await this.options.client.request<{ status?: { token?: string; expirationTimestamp?: string } }>({
      method: "POST",
      path: `/api/v1/namespaces/${request.namespace}/serviceaccounts/${request.serviceAccount}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          audiences: [...request.audiences],
          expirationSeconds: request.expirationSeconds,
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: request.podName, uid: request.podUid },
        },
      },
    });
    const token = answer.status?.token;
    const expiresAt = Date.parse(answer.status?.expirationTimestamp ?? "");
    if (!token || Number.isNaN(expiresAt)) throw new Error("the TokenRequest's answer holds no token");
    return { token, expiresAt };
  }

  onChange(listener: (change: ObjectChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private lookup(kind: Kind, namespace: string, name: string): Lookup<ConfigMapData | SecretData> {
    const entry = this.watched.get(objectKey(kind, namespace, name));
    // The kubelet's words for an object no pod registered (pkg/kubelet/util/manager).
    return entry?.lookup ?? { state: "unavailable", message: `object ${JSON.stringify(namespace)}/${JSON.stringify(name)} not registered` };
  }

  private reference(key: string, uid: string): void {
    const existing = this.watched.get(key);
    if (existing) return void existing.pods.add(uid);
    const [kind, namespace, name] = JSON.parse(key) as [Kind, string, string];
    const resource = kind === "configMap" ? "configmap" : "secret";
    const entry: Watched = {
      kind,
      namespace,
      name,
      pods: new Set([uid]),
      // The kubelet's message once its reflector has not listed for a second (the loop keeps quiet until then, without waiting).
      lookup: { state: "unavailable", message: `failed to sync ${resource} cache: timed out waiting for the condition`, quietUntil: this.options.clock.now() + FIRST_SYNC_WAIT_MS },
      stop: () => {},
    };
    this.watched.set(key, entry);
    let lastFailure: string | undefined;
    const set = (lookup: Watched["lookup"]) => {
      this.reached();
      entry.lookup = lookup;
      lastFailure = undefined;
      this.announce({ kind, namespace, name });
    };
    entry.stop = runObjectWatch<Record<string, any>>({
      client: this.options.client,
      clock: this.options.clock,
      path: `/api/v1/namespaces/${namespace}/${RESOURCE[kind]}`,
      query: { fieldSelector: `metadata.name=${name}` },
      handlers: {
        listed: (items) => set(items[0] ? { state: "found", object: decode(kind, items[0]) } : { state: "notFound" }),
        event: ({ type, object }) => set(type === "DELETED" ? { state: "notFound" } : { state: "found", object: decode(kind, object) }),
        failed: (error, verb) => {
          // What was read stays; what never was says why.
          if (entry.lookup.state === "unavailable") entry.lookup = { state: "unavailable", message: error.message };
          if (this.unreachableNow(error) || lastFailure === error.message) return;
          lastFailure = error.message;
          this.options.log(`node objects: ${describeFailure(verb, `${RESOURCE[kind]} ${namespace}/${name}`, error)}`);
        },
      },
    });
  }

  private release(key: string, uid: string): void {
    const entry = this.watched.get(key);
    if (!entry) return;
    entry.pods.delete(uid);
    if (entry.pods.size > 0) return;
    entry.stop();
    this.watched.delete(key);
  }

  /** True for a failure to reach the API server (logged once for the whole cache, not per watch). */
  private unreachableNow(error: ClusterApiError): boolean {
    if (!error.unavailable) return false;
    if (!this.unreachable) this.options.log(`node objects: the API server cannot be reached (${error.message}); what was read is kept, and read again once it answers`);
    this.unreachable = true;
    return true;
  }

  private reached(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.options.log("node objects: the API server answers again");
  }

  private announce(change: ObjectChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

function objectKey(kind: Kind, namespace: string, name: string): string {
  return JSON.stringify([kind, namespace, name]);
}

function decode(kind: Kind, object: Record<string, any>): ConfigMapData | SecretData {
  const bytes = (map: Record<string, string> | undefined) => Object.fromEntries(Object.entries(map ?? {}).map(([key, value]) => [key, new Uint8Array(Buffer.from(value, "base64"))]));
  if (kind === "secret") return { data: bytes(object.data) };
  return { data: { ...(object.data ?? {}) }, binaryData: bytes(object.binaryData) };
}

function serviceKey(object: Record<string, any>): string {
  return `${object.metadata?.namespace}/${object.metadata?.name}`;
}

function serviceInfo(object: Record<string, any>): ServiceInfo {
  const ports = Array.isArray(object.spec?.ports) ? object.spec.ports : [];
  return {
    namespace: String(object.metadata?.namespace ?? ""),
    name: String(object.metadata?.name ?? ""),
    clusterIP: String(object.spec?.clusterIP ?? ""),
    ports: ports.map((port: Record<string, any>) => ({ port: Number(port.port), ...(port.name && { name: String(port.name) }), ...(port.protocol && { protocol: String(port.protocol) }) })),
  };
}

/** One line: a 403 names the verb (list or watch, the reflector's two) and the resource; anything else says what failed. */
function describeFailure(verb: "list" | "watch", what: string, error: ClusterApiError): string {
  if (error.forbidden) return `forbidden to ${verb} ${what}: ${error.message}`;
  return `cannot ${verb} ${what}: ${error.message}`;
}
