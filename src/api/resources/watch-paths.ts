/**
 * The deprecated watch paths the API server still serves (`/api/v1/watch/pods`,
 * `/api/v1/watch/namespaces/NS/pods[/NAME]`, the same for events and services, `/api/v1/watch/namespaces[/NAME]`): the stream of `?watch=true` on
 * the collection, whatever `watch` says. A path naming one object watches it through a
 * metadata.name field selector; an explicit field selector must then ask for exactly that name.
 */
import { EVENT_FIELDS } from "./events-api.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { POD_FIELDS } from "./pods/pods-api.ts";
import { exactField, parseFieldSelector } from "../http/selectors.ts";
import { ApiError } from "../http/status.ts";
import { NAMESPACE_FIELDS } from "./namespaces/namespace-table.ts";
import { SERVICE_FIELDS, serviceKind } from "./services-api.ts";
import { namespaceKind } from "./namespaces/namespace-watch.ts";
import { eventKind, podKind } from "./watch-kinds.ts";
import type { WatchKind } from "../watch/watch-kind.ts";
import { serveWatch } from "../watch/watch.ts";

/**
 * The request watching only `name`, as the API server's ListResource narrows a named watch: an
 * empty field selector becomes `metadata.name=NAME`, any other must already require that name.
 */
function namedWatch(request: ApiRequest, name: string, fields: readonly string[]): ApiRequest {
  const selector = request.query.get("fieldSelector") ?? "";
  if (selector.trim() !== "") {
    if (exactField(parseFieldSelector(selector, fields), "metadata.name") !== name) throw ApiError.badRequest("fieldSelector metadata.name doesn't match requested name");
    return request;
  }
  const query = new URLSearchParams(request.query);
  query.set("fieldSelector", `metadata.name=${name}`);
  const url = new URL(request.url);
  url.search = query.toString();
  return { ...request, url, query };
}

function watchPath(path: string, kind: WatchKind, fields: readonly string[]): Route {
  return {
    method: "GET",
    path,
    handle: (request, api) => {
      const name = request.params.name;
      return serveWatch(name === undefined ? request : namedWatch(request, name, fields), api, kind);
    },
  };
}

export const deprecatedWatchRoutes: Route[] = [
  watchPath("/api/v1/watch/pods", podKind, POD_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/pods", podKind, POD_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/pods/:name", podKind, POD_FIELDS),
  watchPath("/api/v1/watch/events", eventKind, EVENT_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/events", eventKind, EVENT_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/events/:name", eventKind, EVENT_FIELDS),
  watchPath("/api/v1/watch/namespaces", namespaceKind, NAMESPACE_FIELDS),
  watchPath("/api/v1/watch/namespaces/:name", namespaceKind, NAMESPACE_FIELDS),
  watchPath("/api/v1/watch/services", serviceKind, SERVICE_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/services", serviceKind, SERVICE_FIELDS),
  watchPath("/api/v1/watch/namespaces/:namespace/services/:name", serviceKind, SERVICE_FIELDS),
];
