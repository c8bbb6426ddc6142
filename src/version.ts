import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
/** The Kubernetes release whose behaviour we follow; probes send User-Agent kube-probe/<this>. */
export const KUBE_VERSION = "1.35";
