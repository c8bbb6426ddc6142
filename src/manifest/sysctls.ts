/**
 * A pod's sysctls as the kubelet reads them: `securityContext.sysctls`, each name normalized as
 * the kubelet's NormalizeName does (`net/ipv4/ip_local_port_range` is `net.ipv4.ip_local_port_range`).
 * The loop admits them (kubelet/admission/sysctl-admission.ts), the docker runtime sets them.
 */
import type { PodSpec } from "./types.ts";

/** NormalizeName: a name written with `/` separators (its first separator a `/`) has `.` and `/` swapped. */
export function normalizeSysctlName(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === ".") return name;
  return name.replace(/[./]/g, (c) => (c === "." ? "/" : "."));
}

/** The pod's sysctls, as its manifest sets them. */
export function podSysctls(spec: PodSpec): { name: string; value: string }[] {
  const context = ((spec.manifest.spec ?? {}) as { securityContext?: { sysctls?: unknown } }).securityContext;
  const sysctls = Array.isArray(context?.sysctls) ? (context.sysctls as { name?: unknown; value?: unknown }[]) : [];
  return sysctls.filter((s) => typeof s?.name === "string").map((s) => ({ name: s.name as string, value: String(s.value ?? "") }));
}

