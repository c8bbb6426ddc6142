/**
 * spec.hostAliases on the process runtime. Its pods share the host's network, so the kubelet's
 * host-network file is the one that fits: the node's /etc/hosts under its header, the aliases after
 * it. The host's own file is never rewritten for one pod: the pod's copy is bound at /etc/hosts in
 * the container's own mount namespace, which only root can give it, and only a pod with aliases
 * asks for one (without them the host's file is already what the container would read).
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ETC_HOSTS_PATH, nodeHostsContent, podHostAliases } from "../etc-hosts.ts";
import type { ContainerConfig } from "../runtime.ts";
import type { BindMount } from "./process-mounts.ts";

/** Writes the pod's hosts file into `podDir` and returns its bind, or undefined when the container reads the host's. */
export function hostAliasesBind(config: ContainerConfig, podDir: string, isRoot = process.getuid?.() === 0, nodeHostsPath = ETC_HOSTS_PATH): BindMount | undefined {
  const aliases = podHostAliases(config.pod);
  if (!isRoot || aliases.length === 0) return undefined;
  // A container that mounts its own /etc/hosts keeps it, as on the kubelet.
  if (config.container.volumeMounts.some((mount) => mount.mountPath === ETC_HOSTS_PATH)) return undefined;
  const file = join(podDir, "etc-hosts");
  writeFileSync(file, nodeHostsContent(readFileSync(nodeHostsPath, "utf8"), aliases));
  chmodSync(file, 0o644);
  return { source: file, target: ETC_HOSTS_PATH, readOnly: false };
}
