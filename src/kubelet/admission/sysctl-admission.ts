/**
 * The kubelet's sysctl admit handler (pkg/kubelet/sysctl: allowlist.go, safe_sysctls.go): a pod's
 * `securityContext.sysctls` must each be a safe sysctl (the list the kubelet allows by default,
 * every one namespaced on this machine's kernel), and one of the network, IPC or user namespace
 * may not be set for a pod sharing the host's; otherwise the pod is refused as SysctlForbidden
 * (`forbidden sysctl: "kernel.msgmax" not allowlisted`). The names are read as the kubelet
 * normalizes them (`net/ipv4/ip_local_port_range` is `net.ipv4.ip_local_port_range`).
 */
import { normalizeSysctlName, podSysctls } from "../../manifest/sysctls.ts";
import type { PodSpec } from "../../manifest/types.ts";
import type { AdmissionRefusal } from "./admission.ts";

/** The kubelet's safe sysctls (SafeSysctlAllowlist), all namespaced on the kernels this agent runs on (4.15 and later). */
export const SAFE_SYSCTLS: readonly string[] = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
  "net.ipv4.tcp_slow_start_after_idle",
  "net.ipv4.tcp_notsent_lowat",
];

export const SYSCTL_FORBIDDEN = "SysctlForbidden";

type Namespace = "IPC" | "Net" | "User";

const NAMESPACE_OF: Readonly<Record<string, Namespace>> = {
  "kernel.sem": "IPC",
  "kernel.shmall": "IPC",
  "kernel.shmmax": "IPC",
  "kernel.shmmni": "IPC",
  "kernel.shm_rmid_forced": "IPC",
  "kernel.msgmax": "IPC",
  "kernel.msgmnb": "IPC",
  "kernel.msgmni": "IPC",
};
const PREFIX_NAMESPACES: readonly (readonly [string, Namespace])[] = [
  ["net.", "Net"],
  ["fs.mqueue.", "IPC"],
  ["user.", "User"],
];

function namespaceOf(name: string): Namespace | undefined {
  return NAMESPACE_OF[name] ?? PREFIX_NAMESPACES.find(([prefix]) => name.startsWith(prefix))?.[1];
}

export function sysctlRefusal(spec: PodSpec): AdmissionRefusal | undefined {
  const raw = (spec.manifest.spec ?? {}) as { hostNetwork?: unknown; hostIPC?: unknown; hostUsers?: unknown };
  const host: Record<Namespace, boolean> = { Net: raw.hostNetwork === true, IPC: raw.hostIPC === true, User: raw.hostUsers !== false };
  for (const { name } of podSysctls(spec)) {
    const normalized = normalizeSysctlName(name);
    let why: string | undefined;
    if (!SAFE_SYSCTLS.includes(normalized)) why = `${JSON.stringify(normalized)} not allowlisted`;
    else {
      const namespace = namespaceOf(normalized);
      if (namespace && host[namespace]) why = `${JSON.stringify(normalized)} not allowed with host ${namespace} enabled`;
    }
    if (why) return { reason: SYSCTL_FORBIDDEN, message: `forbidden sysctl: ${why}` };
  }
  return undefined;
}
