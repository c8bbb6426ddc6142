/**
 * The pod's hostname and DNS domain as the kubelet's GeneratePodHostNameAndDomain gives them:
 * spec.hostnameOverride when set (then no domain), else spec.hostname, else the pod name, cut to 63
 * characters; the domain `SUBDOMAIN.NAMESPACE.svc.CLUSTER_DOMAIN` when spec.subdomain is set. The
 * API server (or our validation) has checked the names already.
 */
import type { PodSpec } from "../manifest/types.ts";

/**
 * This node is given no --cluster-domain, and the kubelet's own default is empty: a subdomain's
 * FQDN then ends in "svc.", as that kubelet writes it.
 */
export const CLUSTER_DOMAIN = "";

const HOSTNAME_MAX_LENGTH = 63;

interface HostnameFields {
  hostname?: unknown;
  hostnameOverride?: unknown;
  subdomain?: unknown;
}

function hostnameFields(pod: PodSpec): HostnameFields {
  const spec = pod.manifest.spec;
  return spec !== null && typeof spec === "object" ? (spec as HostnameFields) : {};
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

export function podHostname(pod: PodSpec): string {
  const spec = hostnameFields(pod);
  const chosen = [spec.hostnameOverride, spec.hostname].find(nonEmpty) ?? pod.name;
  // A cut may end on '-' or '.', which no hostname may.
  return chosen.slice(0, HOSTNAME_MAX_LENGTH).replace(/[-.]+$/, "");
}

/** The pod's DNS domain, or "" when it has none (no subdomain, or a hostnameOverride). */
export function podHostDomain(pod: PodSpec): string {
  const spec = hostnameFields(pod);
  if (nonEmpty(spec.hostnameOverride) || !nonEmpty(spec.subdomain)) return "";
  return `${spec.subdomain}.${pod.namespace}.svc.${CLUSTER_DOMAIN}`;
}
