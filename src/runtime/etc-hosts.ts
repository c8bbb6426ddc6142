/**
 * The hosts file the kubelet gives a pod's containers at /etc/hosts (pkg/kubelet/kubelet_pods.go:
 * makeHostsMount, managedHostsFileContent, nodeHostsFileContent): on the pod network, localhost,
 * the pod's IP with its hostname (and FQDN), then spec.hostAliases; on the host's network, the
 * node's own hosts file under its own header, then the aliases. Pure: the runtime writes it.
 */
import type { PodSpec } from "../manifest/types.ts";
import { podHostDomain, podHostname } from "./pod-hostname.ts";

export const ETC_HOSTS_PATH = "/etc/hosts";

/** The header the upstream e2e tests look for to tell a managed file from the image's own. */
export const MANAGED_HOSTS_HEADER = "# Kubernetes-managed hosts file.\n";
export const MANAGED_HOSTS_HEADER_HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n";

export interface HostAlias {
  ip: string;
  hostnames: string[];
}

/** spec.hostAliases as validated (validate-host-aliases.ts): each an ip and its hostnames. */
export function podHostAliases(pod: PodSpec): HostAlias[] {
  const spec = pod.manifest.spec as { hostAliases?: unknown } | undefined;
  const written = Array.isArray(spec?.hostAliases) ? spec.hostAliases : [];
  return written.flatMap((alias): HostAlias[] => {
    if (alias === null || typeof alias !== "object") return [];
    const { ip, hostnames } = alias as { ip?: unknown; hostnames?: unknown };
    if (typeof ip !== "string") return [];
    return [{ ip, hostnames: Array.isArray(hostnames) ? hostnames.filter((h): h is string => typeof h === "string") : [] }];
  });
}

/**
 * Whether `container` gets the managed file: not when it mounts something at /etc/hosts itself,
 * nor on the pod network before the pod has an IP (the kubelet's shouldMountHostsFile).
 */
export function mountsManagedHosts(pod: PodSpec, volumeMountPaths: readonly string[], podIp: string): boolean {
  if (!pod.hostNetwork && podIp === "") return false;
  return !volumeMountPaths.includes(ETC_HOSTS_PATH);
}

/** One line per alias, its hostnames tab-separated after the ip, after a blank line and a comment. */
export function hostAliasEntries(aliases: readonly HostAlias[]): string {
  if (aliases.length === 0) return "";
  return `\n# Entries added by HostAliases.\n${aliases.map((alias) => `${alias.ip}\t${alias.hostnames.join("\t")}\n`).join("")}`;
}

/** The file for a pod on the pod network, with IP `podIp`. */
export function managedHostsContent(podIp: string, hostname: string, domain: string, aliases: readonly HostAlias[]): string {
  const podLine = domain === "" ? `${podIp}\t${hostname}\n` : `${podIp}\t${hostname}.${domain}\t${hostname}\n`;
  return (
    MANAGED_HOSTS_HEADER +
    "127.0.0.1\tlocalhost\n" +
    "::1\tlocalhost ip6-localhost ip6-loopback\n" +
    "fe00::0\tip6-localnet\n" +
    "fe00::0\tip6-mcastprefix\n" +
    "fe00::1\tip6-allnodes\n" +
    "fe00::2\tip6-allrouters\n" +
    podLine +
    hostAliasEntries(aliases)
  );
}

/** The file for a pod on the host's network: the node's hosts file (`nodeHosts`) as it is, then the aliases. */
export function nodeHostsContent(nodeHosts: string, aliases: readonly HostAlias[]): string {
  return MANAGED_HOSTS_HEADER_HOST_NETWORK + nodeHosts + hostAliasEntries(aliases);
}

/** The pod's file: `readNodeHosts` is asked only for a pod on the host's network. */
export function podHostsContent(pod: PodSpec, podIp: string, readNodeHosts: () => string): string {
  const aliases = podHostAliases(pod);
  if (pod.hostNetwork) return nodeHostsContent(readNodeHosts(), aliases);
  return managedHostsContent(podIp, podHostname(pod), podHostDomain(pod), aliases);
}
