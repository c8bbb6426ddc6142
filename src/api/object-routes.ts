/** The object routes (pods, events, nodes, namespaces the pod writes and the refused writes) as one list for routes.ts. */
import { eventRoutes } from "./events-api.ts";
import type { Route } from "./http.ts";
import { namespaceRoutes } from "./namespaces-api.ts";
import { nodeRoutes } from "./nodes-api.ts";
import { podRoutes } from "./pods-api.ts";
import { podEphemeralRoutes } from "./pods-ephemeral.ts";
import { podUpdateRoutes } from "./pods-update.ts";
import { podWriteRoutes } from "./pods-write-routes.ts";
import { writeRefusalRoutes } from "./write-refusals.ts";

export const objectRoutes: Route[] = [...podRoutes, ...eventRoutes, ...nodeRoutes, ...namespaceRoutes, ...podWriteRoutes, ...podUpdateRoutes, ...podEphemeralRoutes, ...writeRefusalRoutes];
