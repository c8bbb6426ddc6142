/**
 * A PodObjectSource the tests fill by hand: ConfigMaps, Secrets and Services set and removed at
 * will (each change announced as the cluster's cache announces it), and TokenRequests answered
 * when the test says so, so the token refresh can be stepped with the fake clock.
 */
import type { PodSpec } from "../src/manifest/types.ts";
import type { ConfigMapData, IssuedToken, Lookup, ObjectChange, PodObjectSource, SecretData, ServiceInfo, TokenRequestInput } from "../src/kubelet/objects/pod-object-source.ts";

interface PendingToken {
  request: TokenRequestInput;
  resolve(token: IssuedToken): void;
  reject(error: Error): void;
}

export class FakePodObjects implements PodObjectSource {
  readonly configMaps = new Map<string, ConfigMapData>();
  readonly secrets = new Map<string, SecretData>();
  /** Objects that are neither there nor known absent (the cache has not listed them). */
  readonly unread = new Set<string>();
  /** For the unread: until when the source says it is still listing them (the loop keeps quiet). */
  readingUntil?: number;
  serviceList?: ServiceInfo[] = [];
  readonly registered = new Set<string>();
  readonly tokenRequests: PendingToken[] = [];
  private readonly listeners = new Set<(change: ObjectChange) => void>();

  registerPod(pod: PodSpec): void {
    this.registered.add(pod.uid);
  }
  unregisterPod(uid: string): void {
    this.registered.delete(uid);
  }
  configMap(namespace: string, name: string): Lookup<ConfigMapData> {
    return this.lookup(this.configMaps, `configMap ${namespace}/${name}`, "configmap");
  }
  secret(namespace: string, name: string): Lookup<SecretData> {
    return this.lookup(this.secrets, `secret ${namespace}/${name}`, "secret");
  }
  services(): readonly ServiceInfo[] | undefined {
    return this.serviceList;
  }
  serviceAccountToken(request: TokenRequestInput): Promise<IssuedToken> {
    return new Promise((resolve, reject) => this.tokenRequests.push({ request, resolve, reject }));
  }
  onChange(listener: (change: ObjectChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setConfigMap(namespace: string, name: string, data: Record<string, string>, binaryData: Record<string, Uint8Array> = {}): void {
    this.configMaps.set(`configMap ${namespace}/${name}`, { data, binaryData });
    this.announce({ kind: "configMap", namespace, name });
  }
  setSecret(namespace: string, name: string, data: Record<string, string>): void {
    this.secrets.set(`secret ${namespace}/${name}`, { data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, new TextEncoder().encode(v)])) });
    this.announce({ kind: "secret", namespace, name });
  }
  setServices(services: ServiceInfo[] | undefined): void {
    this.serviceList = services;
    this.announce({ kind: "services" });
  }

  private lookup<T>(map: Map<string, T>, key: string, resource: string): Lookup<T> {
    if (this.unread.has(key)) return { state: "unavailable", message: `failed to sync ${resource} cache: timed out waiting for the condition`, ...(this.readingUntil !== undefined && { quietUntil: this.readingUntil }) };
    const object = map.get(key);
    return object ? { state: "found", object } : { state: "notFound" };
  }

  private announce(change: ObjectChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
