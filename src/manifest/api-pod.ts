/**
 * Admission of a pod created through the API: the same rules as a manifest file (admit.ts), with
 * what differs for the second source. Its name is not suffixed with the node (it is no mirror pod),
 * its uid is the one the API gave it (kept across restarts and updates), and its config hash covers
 * the spec only, so a change of labels or annotations does not replace the running pod.
 */
import { admitPod, type AdmittedPod, type ManifestRules } from "./admit.ts";
import { configHash } from "./hash.ts";
import { API_POD_SOURCE, type ApiPodMeta } from "./types.ts";

export interface ApiPodIdentity {
  uid: string;
  /** The agent's --node ("" for none): recorded, never part of the name. */
  node: string;
  /** How messages name the pod, e.g. `pod "web"`. */
  label: string;
  meta: ApiPodMeta;
  /** A pod being created may not have ephemeral containers; one already stored may (`kubectl debug` added them). Default: created. */
  stage?: "create" | "stored";
  /** A pod an API server admitted (the cluster's, or the agent's own) may reference ConfigMaps, Secrets and ServiceAccount tokens; a manifest file's may not. */
  apiObjects?: "allowed";
}

/** @throws ManifestError listing every problem, each with its field path, exactly as for a file. */
export function admitApiPod(object: unknown, identity: ApiPodIdentity, rules: ManifestRules = {}): AdmittedPod {
  const ephemeralContainers = identity.stage === "stored" ? "allowed" : "refused";
  const admitted = admitPod(object, { file: identity.label, source: API_POD_SOURCE, node: "", ephemeralContainers, ...(identity.apiObjects && { apiObjects: identity.apiObjects }) }, rules);
  // The stored spec, defaults included: the pod as created and as read back from the database hash alike.
  const spec = admitted.pod.manifest.spec;
  admitted.pod = {
    ...admitted.pod,
    node: identity.node,
    uid: identity.uid,
    configHash: configHash({ spec }, identity.node),
    api: identity.meta,
  };
  return admitted;
}
