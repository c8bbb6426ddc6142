/** The object routes (pods, events, nodes, namespaces, ConfigMaps, Secrets and ServiceAccounts, the pod writes and the refused writes) as one list for routes.ts. */
import { eventRoutes } from "./events-api.ts";
import type { Route } from "../http/http.ts";
import { namespaceRoutes } from "./namespaces/namespaces-api.ts";
import { nodeRoutes } from "./nodes-api.ts";
import { configObjectRoutes } from "./objects/objects-api.ts";
import { tokenRequestRoutes } from "./objects/token-request-api.ts";
import { podRoutes } from "./pods/pods-api.ts";
import { podEphemeralRoutes } from "./pods/pods-ephemeral.ts";
import { podResizeRoutes } from "./pods/pods-resize.ts";
import { podUpdateRoutes } from "./pods/pods-update.ts";
import { podWriteRoutes } from "./pods/pods-write-routes.ts";
import { writeRefusalRoutes } from "./pods/write-refusals.ts";

export const objectRoutes: Route[] = [...podRoutes, ...eventRoutes, ...nodeRoutes, ...namespaceRoutes, ...configObjectRoutes, ...tokenRequestRoutes, ...podWriteRoutes, ...podUpdateRoutes, ...podEphemeralRoutes, ...podResizeRoutes, ...writeRefusalRoutes];
