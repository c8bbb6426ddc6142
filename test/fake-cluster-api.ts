/**
 * An in-memory API server for Nodes and Leases, behind the ClusterApi seam: it keeps objects with
 * uids and resourceVersions, answers as the real one does (AlreadyExists, NotFound, Conflict on a
 * stale resourceVersion), applies strategic merge patches with the API's own patch code, and
 * records every request it was sent. A test can take it down (a transport failure, as the client
 * throws it) or forbid a request (403, as the Node authorizer answers).
 */
import { ClusterApiError, resourceOf, type ClusterApi, type ClusterRequest, type WatchEvent } from "../src/node/cluster-client.ts";
import { strategicMergePatch } from "../src/api/patch/strategic-merge.ts";
import { PatchSchema } from "../src/api/patch/patch-schema.ts";
import schemas from "../src/manifest/v1-schemas.json";
import type { Clock } from "../src/clock.ts";
import { isoTime } from "../src/v1/time.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  body?: any;
  contentType?: string;
  /** The fake clock's time when it was sent. */
  at: number;
}

// The local API's OpenAPI document leaves out NodeStatus's patch keys (it serves no Node patches);
// v1.NodeStatus declares conditions and addresses `patchStrategy:"merge" patchMergeKey:"type"`, as
// the real API server applies them.
const nodeStatus = (schemas as Record<string, any>)["io.k8s.api.core.v1.NodeStatus"].properties;
for (const field of ["conditions", "addresses"]) Object.assign(nodeStatus[field], { "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge" });
export const NODE_SCHEMA = PatchSchema.of("io.k8s.api.core.v1.Node");

export class FakeClusterApi implements ClusterApi {
  readonly requests: RecordedRequest[] = [];
  /** Objects by their path (`/api/v1/nodes/n1`). */
  readonly objects = new Map<string, any>();
  /** While true every request fails as a refused connection does. */
  down = false;
  /** While true no request is answered: each waits until its signal aborts (an API server that hangs). */
  hang = false;
  /** `VERB resource` (`PATCH nodes/status`) answered 403. */
  readonly forbidden = new Set<string>();
  private revision = 100;
  private uids = 0;

  constructor(private readonly clock: Clock) {}

  /** The requests of `VERB resource` (`PUT leases`), in order. */
  sent(label: string): RecordedRequest[] {
    return this.requests.filter((request) => `${request.method} ${resourceOf(request.path)}` === label);
  }

  /** Changes a stored object as another writer would (the node-lifecycle controller): a new resourceVersion. */
  edit(path: string, change: (object: any) => void): void {
    const object = this.objects.get(path);
    change(object);
    object.metadata.resourceVersion = String(++this.revision);
  }

  async request<T = Record<string, any>>(request: ClusterRequest): Promise<T> {
    this.requests.push({ method: request.method, path: request.path, body: structuredClone(request.body), contentType: request.contentType, at: this.clock.now() });
    await Promise.resolve();
    const label = `${request.method} ${resourceOf(request.path)}`;
    if (this.hang) {
      await new Promise((_, reject) => request.signal?.addEventListener("abort", () => reject(request.signal!.reason), { once: true }));
    }
    if (this.down) throw new ClusterApiError(0, "ServiceUnavailable", `${request.method} ${request.path}: Unable to connect. Is the computer able to access the url?`, request);
    if (this.forbidden.has(label)) throw new ClusterApiError(403, "Forbidden", `${resourceOf(request.path)} is forbidden: User "system:node:n1" cannot ${request.method.toLowerCase()} it`, request);
    return structuredClone(this.answer(request)) as T;
  }

  watch<T = Record<string, any>>(): AsyncIterable<WatchEvent<T>> {
    throw new Error("FakeClusterApi: no watches");
  }

  private answer(request: ClusterRequest): any {
    const { method, path } = request;
    const body = structuredClone(request.body) as any;
    if (method === "POST") {
      const target = `${path}/${body.metadata.name}`;
      if (this.objects.has(target)) throw new ClusterApiError(409, "AlreadyExists", `${resourceOf(path)} "${body.metadata.name}" already exists`, request);
      body.metadata = { ...body.metadata, uid: `uid-${++this.uids}`, resourceVersion: String(++this.revision), creationTimestamp: isoTime(this.clock.now()) };
      this.objects.set(target, body);
      return body;
    }
    const target = path.endsWith("/status") ? path.slice(0, -"/status".length) : path;
    const stored = this.objects.get(target);
    if (!stored) throw new ClusterApiError(404, "NotFound", `${resourceOf(path)} "${target.split("/").pop()}" not found`, request);
    if (method === "GET") return stored;
    if (method === "PUT") {
      if (body.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        throw new ClusterApiError(409, "Conflict", `Operation cannot be fulfilled on ${resourceOf(path)} "${body.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`, request);
      }
      body.metadata = { ...body.metadata, uid: stored.metadata.uid, resourceVersion: String(++this.revision) };
      this.objects.set(target, body);
      return body;
    }
    if (method === "PATCH") {
      const patched = strategicMergePatch(stored, body, NODE_SCHEMA) as any;
      // The status subresource keeps the spec, as the Node's status strategy does.
      patched.spec = stored.spec;
      patched.metadata.resourceVersion = String(++this.revision);
      this.objects.set(target, patched);
      return patched;
    }
    throw new Error(`FakeClusterApi: ${method} ${path} not served`);
  }
}
