/**
 * The kubelet-managed /etc/hosts on docker: written to the pod's directory beside its emptyDirs at
 * each container start (so a changed pod IP or node file is picked up, as the kubelet rewrites it
 * in makeMounts), and bound over the engine's own /etc/hosts, which the engine then leaves out.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePrivateDir } from "../../host/private-files.ts";
import { ETC_HOSTS_PATH, mountsManagedHosts, podHostsContent } from "../etc-hosts.ts";
import type { ContainerConfig } from "../runtime.ts";
import { podVolumeDir, type ResolvedMount } from "./docker-container-config.ts";

/** Not a DNS label (the underscore), so no volume of the pod can be named so. */
const HOSTS_FILE_NAME = "etc_hosts";

/** Writes the pod's hosts file and returns its mount, or undefined when this container keeps its own. */
export function etcHostsMount(config: ContainerConfig, volumeRoot: string, nodeHostsPath = ETC_HOSTS_PATH): ResolvedMount | undefined {
  const { pod, container, sandbox } = config;
  if (!mountsManagedHosts(pod, container.volumeMounts.map((mount) => mount.mountPath), sandbox.ip)) return undefined;
  const podDir = podVolumeDir(volumeRoot, pod.uid);
  makePrivateDir(volumeRoot);
  mkdirSync(podDir, { recursive: true });
  const file = join(podDir, HOSTS_FILE_NAME);
  writeFileSync(file, podHostsContent(pod, sandbox.ip, () => readFileSync(nodeHostsPath, "utf8")));
  // Readable by a container's non-root user whatever the agent's umask.
  chmodSync(file, 0o644);
  return { source: file, target: ETC_HOSTS_PATH, readOnly: false };
}
