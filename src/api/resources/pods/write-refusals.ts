/**
 * The pod writes that are refused, with a 405 MethodNotAllowed saying which file or directory to
 * change instead: every write under `serve` (no loop runs what it would store), a change or delete
 * of a manifest file's pod (removing or editing the file is how a static pod is changed), and the
 * writes not served yet. Under `run`, creates and deletes of API pods go to pods-create.ts and
 * pods-delete.ts, which fall back to these refusals.
 */
import { dirname } from "node:path";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Method, Route } from "../../http/http.ts";
import { decodeRequestObject } from "../../http/request-object.ts";
import { ApiError } from "../../http/status.ts";

/** The directory the agent reads manifests from, as its pods and refused files record it. */
export function manifestDirectory(api: ApiContext): string | undefined {
  for (const row of api.store.livePods()) {
    const source = api.store.podRecord(row.uid)?.spec.source;
    if (source) return dirname(source);
  }
  const refused = api.store.refusedPods()[0];
  return refused ? dirname(refused.file) : undefined;
}

/**
 * A create names the manifest directory; but `kubectl apply -f web.yaml` of a manifest the agent
 * runs also arrives as a create (the pod's API name is `web-NODE`, so kubectl found no `web`): that
 * one is told which file it is.
 */
export async function refuseCreate(request: ApiRequest, api: ApiContext): Promise<never> {
  const posted = await postedName(request);
  if (posted) {
    const namespace = posted.namespace ?? request.params.namespace!;
    for (const row of api.store.livePods({ namespace })) {
      const spec = api.store.podRecord(row.uid)?.spec;
      if (spec?.source && (spec.name === posted.name || row.name === posted.name)) {
        throw new ApiError(405, "MethodNotAllowed", `pod ${row.name} comes from the manifest file ${spec.source}: edit the file to change it`, { name: row.name, kind: "pods" });
      }
    }
  }
  const directory = manifestDirectory(api);
  const where = directory ? `add a manifest file to ${directory}` : "add a manifest file to the agent's --manifests directory";
  throw new ApiError(405, "MethodNotAllowed", `pods are created from manifest files or through the agent's API (minikubelet run), not through this server, which only reads the database: ${where}`, { kind: "pods" });
}

/** The posted pod's name and namespace, if the body is an object naming one. */
async function postedName(request: ApiRequest): Promise<{ name: string; namespace?: string } | undefined> {
  try {
    const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), "Pod") as { metadata?: { name?: unknown; namespace?: unknown } };
    const { name, namespace } = body.metadata ?? {};
    if (typeof name !== "string" || name === "") return undefined;
    return { name, ...(typeof namespace === "string" && namespace !== "" && { namespace }) };
  } catch {
    return undefined;
  }
}

export function refuseChange(verb: "delete" | "change") {
  return (request: ApiRequest, api: ApiContext): never => {
    const { namespace, name } = request.params as { namespace: string; name: string };
    const row = api.store.livePods({ namespace, name })[0];
    if (!row) throw ApiError.notFound("pods", name);
    const spec = api.store.podRecord(row.uid)?.spec;
    if (spec?.api) {
      const how = api.podWrites ? "is not served yet" : "needs the agent (minikubelet run): this server only reads its database";
      throw new ApiError(405, "MethodNotAllowed", `pod ${name} was created through the API; a ${verb} through this API ${how}`, { name, kind: "pods" });
    }
    const source = spec?.source;
    const file = source ? `the manifest file ${source}` : "a manifest file";
    const action = verb === "delete" ? "remove the file to delete it" : "edit the file to change it";
    throw new ApiError(405, "MethodNotAllowed", `pod ${name} comes from ${file}: ${action}`, { name, kind: "pods" });
  };
}

function refuseCollection(request: ApiRequest, api: ApiContext): never {
  const directory = manifestDirectory(api);
  throw new ApiError(405, "MethodNotAllowed", `pods are deleted one at a time (kubectl delete pod NAME), or by removing their manifest files${directory ? ` from ${directory}` : ""}`, { kind: "pods" });
}

const changes: Method[] = ["PUT", "PATCH"];

export const writeRefusalRoutes: Route[] = [
  { method: "POST", path: "/api/v1/namespaces/:namespace/pods", handle: refuseCreate },
  { method: "DELETE", path: "/api/v1/namespaces/:namespace/pods", handle: refuseCollection },
  { method: "DELETE", path: "/api/v1/namespaces/:namespace/pods/:name", handle: refuseChange("delete") },
  ...changes.flatMap((method): Route[] => [
    { method, path: "/api/v1/namespaces/:namespace/pods/:name", handle: refuseChange("change") },
    { method, path: "/api/v1/namespaces/:namespace/pods/:name/status", handle: refuseChange("change") },
  ]),
];
