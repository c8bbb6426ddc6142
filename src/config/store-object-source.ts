/**
 * The loop's PodObjectSource on one host: the ConfigMaps and Secrets created through the agent's
 * own API, read from the agent's database (store/object-store.ts) on its write connection. A read
 * is one indexed row, so there is no cache to keep: every lookup sees the last committed write,
 * and each write is told to the loop (`onChange`), which syncs the pods that reference the object
 * (a waiting container starts, a volume's files are written again).
 *
 * No Services exist here (no service variables), and the agent signs no ServiceAccount tokens:
 * only node mode has an API server to issue them.
 */
import type { Database } from "bun:sqlite";
import type { PodSpec } from "../manifest/types.ts";
import type { ConfigMapData, IssuedToken, Lookup, ObjectChange, PodObjectSource, SecretData, ServiceInfo } from "../kubelet/objects/pod-object-source.ts";
import { liveObject } from "../store/object-reads.ts";
import type { SqliteObjectStore } from "../store/object-store.ts";

export const NO_TOKENS_MESSAGE = "this agent's own API issues no ServiceAccount tokens: a pod that mounts one runs in node mode (run --kubeconfig), where the cluster's API server issues it";

const bytesOf = (values: unknown): Record<string, Uint8Array> =>
  Object.fromEntries(Object.entries((values ?? {}) as Record<string, string>).map(([key, value]) => [key, new Uint8Array(Buffer.from(value, "base64"))]));

export class StoreObjectSource implements PodObjectSource {
  constructor(
    private readonly db: Database,
    private readonly objects: SqliteObjectStore,
  ) {}

  registerPod(_pod: PodSpec): void {
    // Every lookup reads the database: nothing to start watching.
  }

  unregisterPod(_uid: string): void {}

  configMap(namespace: string, name: string): Lookup<ConfigMapData> {
    const stored = liveObject(this.db, "configmaps", namespace, name);
    if (!stored) return { state: "notFound" };
    const { data, binaryData } = stored.object;
    return { state: "found", object: { data: (data ?? {}) as Record<string, string>, binaryData: bytesOf(binaryData) } };
  }

  secret(namespace: string, name: string): Lookup<SecretData> {
    const stored = liveObject(this.db, "secrets", namespace, name);
    if (!stored) return { state: "notFound" };
    return { state: "found", object: { data: bytesOf(stored.object.data) } };
  }

  services(): readonly ServiceInfo[] {
    return [];
  }

  serviceAccountToken(): Promise<IssuedToken> {
    return Promise.reject(new Error(NO_TOKENS_MESSAGE));
  }

  onChange(listener: (change: ObjectChange) => void): () => void {
    return this.objects.onChange((key) => {
      if (key.resource === "configmaps") listener({ kind: "configMap", namespace: key.namespace, name: key.name });
      else if (key.resource === "secrets") listener({ kind: "secret", namespace: key.namespace, name: key.name });
    });
  }
}
