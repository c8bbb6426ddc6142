/**
 * What the client's Accept header asks for, as the API server reads it: a server-side Table
 * (`application/json;as=Table;v=v1;g=meta.k8s.io`), aggregated discovery
 * (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`), or plain JSON. kubectl
 * always offers plain JSON (or `*` / `*`) as a fallback, so JSON is the answer when nothing else fits.
 */

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

/** The Accept header's media ranges in the client's order (q-values ignored: kubectl lists by preference). */
export function parseAccept(accept: string | null): MediaType[] {
  if (!accept) return [];
  return accept
    .split(",")
    .map((range) => range.trim())
    .filter((range) => range !== "")
    .map((range) => {
      const [type = "", ...parameters] = range.split(";").map((part) => part.trim());
      const params: Record<string, string> = {};
      for (const parameter of parameters) {
        const equals = parameter.indexOf("=");
        if (equals > 0) params[parameter.slice(0, equals).trim().toLowerCase()] = parameter.slice(equals + 1).trim();
      }
      return { type: type.toLowerCase(), params };
    });
}

/** The meta.k8s.io Table version asked for (`v1` or `v1beta1`), before any plain JSON; undefined for plain JSON. */
export function tableVersion(headers: Headers): "v1" | "v1beta1" | undefined {
  for (const media of parseAccept(headers.get("accept"))) {
    if (!isJson(media)) continue;
    if (media.params.as !== "Table") return undefined;
    if (media.params.g === "meta.k8s.io" && (media.params.v === "v1" || media.params.v === "v1beta1")) return media.params.v;
  }
  return undefined;
}

/** True when the client asks for a server-side Table first. */
export function wantsTable(headers: Headers): boolean {
  return tableVersion(headers) !== undefined;
}

export const AGGREGATED_DISCOVERY_VERSIONS = ["v2", "v2beta1"] as const;
export type AggregatedDiscoveryVersion = (typeof AGGREGATED_DISCOVERY_VERSIONS)[number];

/** The apidiscovery.k8s.io version asked for (kubectl offers v2, then v2beta1), or undefined for legacy discovery. */
export function aggregatedDiscoveryVersion(headers: Headers): AggregatedDiscoveryVersion | undefined {
  for (const media of parseAccept(headers.get("accept"))) {
    if (!isJson(media)) continue;
    if (media.params.as !== "APIGroupDiscoveryList") return undefined;
    const version = media.params.v as AggregatedDiscoveryVersion;
    if (media.params.g === "apidiscovery.k8s.io" && AGGREGATED_DISCOVERY_VERSIONS.includes(version)) return version;
  }
  return undefined;
}

/** The Content-Type an aggregated discovery answer must carry, or kubectl reads it as legacy and finds no resources. */
export function aggregatedDiscoveryContentType(version: AggregatedDiscoveryVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

function isJson(media: MediaType): boolean {
  return media.type === "application/json" || media.type === "*/*" || media.type === "application/*";
}
