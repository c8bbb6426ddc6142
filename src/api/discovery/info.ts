/**
 * `/version` and the health endpoints. `/version`'s minor is the Kubernetes release whose kubelet
 * we follow; the gcloud kubectl dispatcher reads it to pick `kubectl.1.<minor>` (falling back to its
 * own build when it has none that new).
 */
import { KUBELET_VERSION, KUBE_VERSION, VERSION } from "../../version.ts";
import type { Route } from "../http/http.ts";

export function versionInfo() {
  const [major = "1", minor = "0"] = KUBE_VERSION.split(".");
  return {
    major,
    minor,
    // Must parse as semver: kubectl version fails on anything else. Build metadata names us.
    gitVersion: `${KUBELET_VERSION}+minikubelet-${VERSION}`,
    gitCommit: "",
    gitTreeState: "",
    buildDate: "",
    goVersion: `bun${Bun.version}`,
    compiler: "bun",
    platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
  };
}

/** The server is up when it answers; the database it reads is checked by each read. */
const ok: Route["handle"] = () => new Response("ok", { headers: { "Content-Type": "text/plain; charset=utf-8" } });

export const infoRoutes: Route[] = [
  { method: "GET", path: "/version", handle: () => Response.json(versionInfo()) },
  { method: "GET", path: "/healthz", handle: ok },
  { method: "GET", path: "/livez", handle: ok },
  { method: "GET", path: "/readyz", handle: ok },
];
