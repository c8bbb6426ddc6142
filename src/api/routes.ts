/**
 * Every route the API serves, in one list: each part adds its module's routes here with one import
 * and one spread. The server takes the first route whose pattern matches: the watch routes come
 * before the object routes, whose collection lists they wrap.
 */
import { discoveryRoutes } from "./discovery/discovery.ts";
import { attachRoutes } from "./streaming/attach-api.ts";
import { execRoutes } from "./streaming/exec-api.ts";
import type { Route } from "./http/http.ts";
import { infoRoutes } from "./discovery/info.ts";
import { logRoutes } from "./resources/pods/logs-api.ts";
import { nodeProxyRoutes } from "./resources/node-proxy.ts";
import { objectRoutes } from "./resources/object-routes.ts";
import { openApiRoutes } from "./discovery/openapi.ts";
import { portForwardRoutes } from "./portforward/portforward-api.ts";
import { watchRoutes } from "./resources/watch-kinds.ts";
import { deprecatedWatchRoutes } from "./resources/watch-paths.ts";
import { authReviewRoutes } from "./resources/auth-reviews.ts";
import { serviceRoutes } from "./resources/services-api.ts";
import { metricsRoutes } from "./resources/metrics-api.ts";

export const apiRoutes: Route[] = [
  ...infoRoutes,
  ...discoveryRoutes,
  ...watchRoutes,
  ...deprecatedWatchRoutes,
  ...nodeProxyRoutes,
  ...objectRoutes,
  ...openApiRoutes,
  ...logRoutes,
  ...execRoutes,
  ...portForwardRoutes,
  ...authReviewRoutes,
  ...serviceRoutes,
  ...attachRoutes,
  ...metricsRoutes,
];
