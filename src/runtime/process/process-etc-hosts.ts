/**
 * The kubelet-managed /etc/hosts on the process runtime (etc-hosts.ts has its content). A pod that
 * is not on the host's network has a hostname of its own (its UTS namespace), so it gets the
 * kubelet's file for its IP (the host's loopback here) and hostname, its aliases after them. A pod
 * on the host's network gets the node's file under its header, then its aliases; without aliases
 * that is the host's own file, which it reads already. The host's file is never rewritten for a
 * pod: the pod's copy is bound at /etc/hosts in the container's own mount namespace, which only
 * root can give it.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ETC_HOSTS_PATH, podHostAliases, podHostsContent } from "../etc-hosts.ts";
import type { ContainerConfig } from "../runtime.ts";
import type { BindMount } from "./process-mounts.ts";

/** Writes the pod's hosts file into `dir` (its state directory) and returns its bind, or undefined when the container reads the host's. */
export function podHostsBind(config: ContainerConfig, dir: string, isRoot: boolean, nodeHostsPath = ETC_HOSTS_PATH): BindMount | undefined {
  const { pod } = config;
  if (!isRoot || (pod.hostNetwork && podHostAliases(pod).length === 0)) return undefined;
  // A container that mounts its own /etc/hosts keeps it, as on the kubelet.
  if (config.container.volumeMounts.some((mount) => mount.mountPath === ETC_HOSTS_PATH)) return undefined;
  const file = join(dir, "etc-hosts");
  const content = podHostsContent(pod, config.sandbox.ip, () => readFileSync(nodeHostsPath, "utf8"));
  // Another container of the pod may have it bound: the same inode is rewritten only when it changed.
  if (readOrUndefined(file) !== content) {
    writeFileSync(file, content);
    chmodSync(file, 0o644);
  }
  return { source: file, target: ETC_HOSTS_PATH, readOnly: false };
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
