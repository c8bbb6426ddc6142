/**
 * The API server's defaults on a container as the manifest wrote it, taken from the validated spec
 * (which has them already): what a real API server stores and `kubectl describe pod` prints, so a
 * probe reads `timeout=1s period=10s #success=1 #failure=3` rather than zeros, and a port `8080/TCP`.
 */
import type { ContainerSpec, Probe } from "../manifest/types.ts";

type Written = Record<string, unknown>;

const PROBES = ["startupProbe", "livenessProbe", "readinessProbe"] as const;

export function containerWithDefaults(written: Written, validated: ContainerSpec | undefined): Written {
  if (!validated) return written;
  const result: Written = {
    ...written,
    imagePullPolicy: written.imagePullPolicy ?? validated.imagePullPolicy,
    terminationMessagePath: written.terminationMessagePath ?? validated.terminationMessagePath,
    terminationMessagePolicy: written.terminationMessagePolicy ?? "File",
  };
  if (Array.isArray(written.ports)) result.ports = written.ports.map(portWithDefaults);
  result.resources = resourcesAsServed(written.resources, validated);
  for (const field of PROBES) {
    const probe = validated[field];
    if (written[field] && probe) result[field] = probeWithDefaults(written[field] as Written, probe);
  }
  return result;
}

/** The API server defaults a port's protocol; kubectl describe prints `8080/` without it. */
function portWithDefaults(port: unknown): unknown {
  if (typeof port !== "object" || port === null) return port;
  const written = port as Written;
  return { ...written, protocol: written.protocol ?? "TCP" };
}

function probeWithDefaults(written: Written, probe: Probe): Written {
  const result: Written = {
    ...written,
    timeoutSeconds: probe.timeoutSeconds,
    periodSeconds: probe.periodSeconds,
    successThreshold: probe.successThreshold,
    failureThreshold: probe.failureThreshold,
  };
  const httpGet = written.httpGet as Written | undefined;
  if (httpGet && probe.handler.type === "httpGet") result.httpGet = { ...httpGet, scheme: httpGet.scheme ?? probe.handler.scheme };
  return result;
}

/**
 * Quantities as the API server stores them (`0.5` is `500m`), requests defaulted from limits, and
 * `resources: {}` when none are set, as a real API server always serves the field.
 */
function resourcesAsServed(written: unknown, validated: ContainerSpec): Written {
  const result: Written = typeof written === "object" && written !== null ? { ...(written as Written) } : {};
  // A record checkpointed before resources were read has none: what was written is all there is.
  if (!validated.resources) return result;
  delete result.limits;
  delete result.requests;
  const { limits = {}, requests = {} } = validated.resources ?? {};
  if (Object.keys(limits).length > 0) result.limits = limits;
  if (Object.keys(requests).length > 0) result.requests = requests;
  return result;
}
