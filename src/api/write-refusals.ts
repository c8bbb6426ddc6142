/**
 * Writes to pods are not served: pods come from manifest files, so the answer to create, apply,
 * edit or delete is a 405 MethodNotAllowed that says which file or directory to change instead.
 */
import { dirname } from "node:path";
import type { ApiContext } from "./context.ts";
import type { ApiRequest, Method, Route } from "./http.ts";
import { ApiError } from "./status.ts";

/** The directory the agent reads manifests from, as its pods and refused files record it. */
export function manifestDirectory(api: ApiContext): string | undefined {
  for (const row of api.store.livePods()) {
    const source = api.store.podRecord(row.uid)?.spec.source;
    if (source) return dirname(source);
  }
  const refused = api.store.refusedPods()[0];
  return refused ? dirname(refused.file) : undefined;
}

function refuseCreate(request: ApiRequest, api: ApiContext): never {
  const directory = manifestDirectory(api);
  const where = directory ? `add a manifest file to ${directory}` : "add a manifest file to the agent's --manifests directory";
  throw new ApiError(405, "MethodNotAllowed", `pods are created from manifest files, not through the API: ${where}`, { kind: "pods" });
}

function refuseChange(verb: "delete" | "change") {
  return (request: ApiRequest, api: ApiContext): never => {
    const { namespace, name } = request.params as { namespace: string; name: string };
    const row = api.store.livePods({ namespace, name })[0];
    if (!row) throw ApiError.notFound("pods", name, "pods");
    const source = api.store.podRecord(row.uid)?.spec.source;
    const file = source ? `the manifest file ${source}` : "a manifest file";
    const action = verb === "delete" ? "remove the file to delete it" : "edit the file to change it";
    throw new ApiError(405, "MethodNotAllowed", `pod ${name} comes from ${file}: ${action}`, { name, kind: "pods" });
  };
}

function refuseCollection(request: ApiRequest, api: ApiContext): never {
  const directory = manifestDirectory(api);
  throw new ApiError(405, "MethodNotAllowed", `pods are deleted by removing their manifest files${directory ? ` from ${directory}` : ""}`, { kind: "pods" });
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
