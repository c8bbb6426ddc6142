import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
/**
 * The Kubernetes release whose kubelet we follow, and the version a node reports to the control plane
 * (`nodeInfo.kubeletVersion` is `v` + this; the version skew policy holds it to the API server's).
 */
export const KUBE_VERSION = "1.37.2";
/** major.minor of KUBE_VERSION: probes send User-Agent kube-probe/<this>, as the kubelet does. */
export const KUBE_MINOR_VERSION = KUBE_VERSION.split(".").slice(0, 2).join(".");
/** What the Node reports as `status.nodeInfo.kubeletVersion`. */
export const KUBELET_VERSION = `v${KUBE_VERSION}`;

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
