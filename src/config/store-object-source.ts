/**
 * The loop's PodObjectSource on one host: the ConfigMaps and Secrets created through the agent's
 * own API, read from the agent's database (store/object-store.ts) on its write connection. A read
 * is one indexed row, so there is no cache to keep: every lookup sees the last committed write,
 * and each write is told to the loop (`onChange`), which syncs the pods that reference the object
 * (a waiting container starts, a volume's files are written again).
 *
 * The one Service is the agent's API, as `kubernetes` in `default` (every container's
 * KUBERNETES_SERVICE_HOST and _PORT point a client in a pod at it), and tokens are the agent's
 * TokenRequest (api/resources/objects/token-request-api.ts), handed in by the agent: without its
 * API there is neither.
 */
import type { Database } from "bun:sqlite";
import type { PodSpec } from "../manifest/types.ts";
import type { ConfigMapData, IssuedToken, Lookup, ObjectChange, PodObjectSource, SecretData, ServiceInfo, TokenRequestInput } from "../kubelet/objects/pod-object-source.ts";
import { liveObject } from "../store/object-reads.ts";
import type { SqliteObjectStore } from "../store/object-store.ts";

export const NO_TOKENS_MESSAGE = "the agent's API is off (--api-listen off): no ServiceAccount token is issued without it";

const bytesOf = (values: unknown): Record<string, Uint8Array> =>
  Object.fromEntries(Object.entries((values ?? {}) as Record<string, string>).map(([key, value]) => [key, new Uint8Array(Buffer.from(value, "base64"))]));

export interface StoreObjectSourceOptions {
  /** The agent's write connection. */
  db: Database;
  objects: SqliteObjectStore;
  /** The agent's API, when it listens: its address is the `kubernetes` Service, and it issues the tokens. */
  api?: {
    host: string;
    port: number;
    issueToken(request: TokenRequestInput): Promise<IssuedToken>;
  };
}

export class StoreObjectSource implements PodObjectSource {
  private readonly db: Database;

  constructor(private readonly options: StoreObjectSourceOptions) {
    this.db = options.db;
  }

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
    const api = this.options.api;
    return api ? [{ namespace: "default", name: "kubernetes", clusterIP: api.host, ports: [{ name: "https", port: api.port, protocol: "TCP" }] }] : [];
  }

  serviceAccountToken(request: TokenRequestInput): Promise<IssuedToken> {
    return this.options.api ? this.options.api.issueToken(request) : Promise.reject(new Error(NO_TOKENS_MESSAGE));
  }

  onChange(listener: (change: ObjectChange) => void): () => void {
    return this.options.objects.onChange((key) => {
      if (key.resource === "configmaps") listener({ kind: "configMap", namespace: key.namespace, name: key.name });
      else if (key.resource === "secrets") listener({ kind: "secret", namespace: key.namespace, name: key.name });
    });
  }
}
