/**
 * Every route the API serves, in one list: each part adds its module's routes here with one import
 * and one spread. The server takes the first route whose pattern matches: the watch routes come
 * before the object routes, whose collection lists they wrap.
 */
import { discoveryRoutes } from "./discovery.ts";
import { attachRoutes } from "./attach-api.ts";
import { execRoutes } from "./exec-api.ts";
import type { Route } from "./http.ts";
import { infoRoutes } from "./info.ts";
import { logRoutes } from "./logs-api.ts";
import { nodeProxyRoutes } from "./node-proxy.ts";
import { objectRoutes } from "./object-routes.ts";
import { openApiRoutes } from "./openapi.ts";
import { portForwardRoutes } from "./portforward-api.ts";
import { watchRoutes } from "./watch-kinds.ts";
import { deprecatedWatchRoutes } from "./watch-paths.ts";
import { authReviewRoutes } from "./auth-reviews.ts";
import { serviceRoutes } from "./services-api.ts";
import { metricsRoutes } from "./metrics-api.ts";

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
