/**
 * Every route the API serves, in one list: each part adds its module's routes here with one import
 * and one spread. The server matches by path pattern, so order does not matter.
 */
import { discoveryRoutes } from "./discovery.ts";
import { execRoutes } from "./exec-api.ts";
import type { Route } from "./http.ts";
import { infoRoutes } from "./info.ts";
import { logRoutes } from "./logs-api.ts";
import { objectRoutes } from "./object-routes.ts";
import { openApiRoutes } from "./openapi.ts";

export const apiRoutes: Route[] = [
  ...infoRoutes,
  ...discoveryRoutes,
  ...objectRoutes,
  ...openApiRoutes,
  ...logRoutes,
  ...execRoutes,
];
