/**
 * The pods/ephemeralcontainers subresource (`kubectl debug POD`): a PATCH or PUT that may change
 * nothing of the pod but `spec.ephemeralContainers`, and may only add to it (the API server's
 * podEphemeralContainersStrategy and ValidatePodEphemeralContainersUpdate). The loop then starts
 * the new container once, in the pod's sandbox. A static pod (a manifest file's) has none, as on a
 * cluster; GET serves the pod.
 */
import { canonicalJson } from "../../../manifest/hash.ts";
import type { PodSpec } from "../../../manifest/types.ts";
import type { StatusCause } from "../../http/status.ts";
import { subresourceRoutes, type Json } from "./pod-subresource-write.ts";

/** Existing ephemeral containers may not be removed or changed, each told apart, as the API server words it. */
function onlyAdded(before: PodSpec, after: PodSpec): StatusCause[] {
  const listed = (spec: PodSpec) => listOf((spec.manifest.spec as Json | undefined)?.ephemeralContainers);
  const byName = new Map(listed(after).map((container) => [container.name, container]));
  const problems = listed(before).flatMap((old) => {
    const now = byName.get(old.name);
    if (!now) return [`existing ephemeral containers ${JSON.stringify(old.name)} may not be removed`];
    return canonicalJson(now) === canonicalJson(old) ? [] : [`existing ephemeral containers ${JSON.stringify(old.name)} may not be changed`];
  });
  return problems.map((message) => ({ reason: "FieldValueForbidden", message: `Forbidden: ${message}`, field: "spec.ephemeralContainers" }));
}

function listOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => typeof item === "object" && item !== null && !Array.isArray(item)) : [];
}

export const podEphemeralRoutes = subresourceRoutes({
  path: "/api/v1/namespaces/:namespace/pods/:name/ephemeralcontainers",
  staticPodMessage: "static pods do not support ephemeral containers",
  take: (stored, proposed) => ({ ...stored, ephemeralContainers: Array.isArray(proposed.ephemeralContainers) ? proposed.ephemeralContainers : [] }),
  check: onlyAdded,
});
