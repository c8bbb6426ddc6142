/**
 * The pod writes served under `run` (create, delete): listed before the refusals, which answer
 * everything else, and which these fall back to where no loop could act (`serve`, a file's pod).
 */
import type { Route } from "../../http/http.ts";
import { createPod } from "./pods-create.ts";
import { deletePod } from "./pods-delete.ts";

export const podWriteRoutes: Route[] = [
  { method: "POST", path: "/api/v1/namespaces/:namespace/pods", handle: createPod },
  { method: "DELETE", path: "/api/v1/namespaces/:namespace/pods/:name", handle: deletePod },
];
