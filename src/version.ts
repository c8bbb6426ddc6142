import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
/** The Kubernetes release whose behaviour we follow; probes send User-Agent kube-probe/<this>. */
export const KUBE_VERSION = "1.35";

/**
 * The git commit the binary was compiled from, embedded by scripts/build (`--define`): "" when it
 * was built outside a git checkout, undefined when this code runs from source rather than compiled.
 */
declare const MINIKUBELET_COMMIT: string | undefined;
export const COMMIT: string | undefined = typeof MINIKUBELET_COMMIT === "string" ? MINIKUBELET_COMMIT : undefined;

/** What `--version` prints: the release, where it was built from, and the kubelet it follows. */
export function versionLine(commit: string | undefined = COMMIT): string {
  const origin = commit === undefined ? "run from source" : commit === "" ? "built outside git" : `commit ${commit}`;
  return `minikubelet ${VERSION} (${origin}; kubelet behaviour of Kubernetes ${KUBE_VERSION})`;
}
