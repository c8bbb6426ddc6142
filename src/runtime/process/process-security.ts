/**
 * Who a process container runs as, from its effective security context (manifest/security-context.ts),
 * as a container runtime applies it (containerd's CRI plugin): runAsUser, runAsGroup (else the
 * user's group in the host's /etc/passwd, else 0, as an image's passwd gives it), the user's groups
 * in the host's /etc/group with the pod's supplementalGroups and fsGroup; the capabilities
 * (capabilities.ts) unless privileged; no_new_privs when allowPrivilegeEscalation is false; a
 * read-only root. The host is the image: its passwd and group files are the ones read.
 *
 * Only root can run a process as another user, cut its groups or remount its root: an agent that is
 * not root refuses a container asking for that rather than run it as the agent's own user. Its
 * processes have no capabilities to drop, so capabilities and privileged mean nothing there.
 */
import { readFileSync } from "node:fs";
import { effectiveSecurity } from "../../manifest/security-context.ts";
import type { PodSpec } from "../../manifest/types.ts";
import { capabilityMask } from "./capabilities.ts";

/** What the monitor applies before the exec (its IDENTITY options), and an exec again. */
export interface ProcessIdentity {
  user?: number;
  group?: number;
  /** The supplementary groups, set whenever user or group is. */
  groups?: number[];
  /** The bounding set kept, as hex; absent for a privileged container (all the agent has). */
  capabilities?: string;
  noNewPrivs?: true;
  /** The kubelet's OOM score adjustment (kubelet/oom-score-adj.ts); absent: the agent's. */
  oomScoreAdj?: number;
}

export interface ProcessSecurity {
  identity: ProcessIdentity;
  readOnlyRoot: boolean;
}

/** The agent's own credentials and the host's account files (the tests give their own). */
export interface HostAccounts {
  uid: number;
  gid: number;
  passwd: () => string;
  group: () => string;
}

export const hostAccounts = (): HostAccounts => ({
  uid: process.getuid?.() ?? 0,
  gid: process.getgid?.() ?? 0,
  passwd: () => readOrEmpty("/etc/passwd"),
  group: () => readOrEmpty("/etc/group"),
});

/** Container `name`'s process security; `fail` is called with what cannot be honoured. */
export function processSecurity(pod: PodSpec, name: string, host: HostAccounts, fail: (message: string) => never): ProcessSecurity {
  const security = effectiveSecurity(pod, name);
  const { runAsUser, runAsGroup } = security;
  const identity: ProcessIdentity = {};
  if (security.noNewPrivs) identity.noNewPrivs = true;
  if (host.uid !== 0) {
    const notRoot = `the agent does not run as root (uid ${host.uid}), so its processes run as its own user`;
    if (runAsUser !== undefined && runAsUser !== host.uid) fail(`securityContext.runAsUser: ${notRoot} and cannot run as uid ${runAsUser}`);
    if (runAsGroup !== undefined && runAsGroup !== host.gid) fail(`securityContext.runAsGroup: ${notRoot} and cannot run as gid ${runAsGroup}`);
    if (security.groups.length > 0) fail(`securityContext.supplementalGroups: ${notRoot} and cannot change its groups`);
    if (security.readOnlyRootFilesystem) fail(`securityContext.readOnlyRootFilesystem: ${notRoot} and cannot remount the root read-only`);
    return { identity, readOnlyRoot: false };
  }
  if (runAsUser !== undefined || runAsGroup !== undefined || security.groups.length > 0) {
    const uid = runAsUser ?? host.uid;
    const account = passwdEntry(host.passwd(), uid);
    identity.user = uid;
    identity.group = runAsGroup ?? account?.gid ?? 0;
    const memberships = account ? groupsOf(host.group(), account.name) : [];
    identity.groups = [...new Set([identity.group, ...memberships, ...security.groups])];
  }
  if (!security.privileged) {
    try {
      identity.capabilities = capabilityMask(security.capabilitiesAdd, security.capabilitiesDrop).toString(16);
    } catch (error) {
      fail(`securityContext.${(error as Error).message}`);
    }
  }
  return { identity, readOnlyRoot: security.readOnlyRootFilesystem };
}

/** The monitor's IDENTITY options (monitor/minikubelet-monitor.c). */
export function identityArgs(identity: ProcessIdentity): string[] {
  return [
    ...(identity.user !== undefined ? ["--user", String(identity.user)] : []),
    ...(identity.group !== undefined ? ["--group", String(identity.group)] : []),
    ...(identity.groups !== undefined ? ["--groups", identity.groups.join(",")] : []),
    ...(identity.capabilities !== undefined ? ["--capabilities", identity.capabilities] : []),
    ...(identity.noNewPrivs ? ["--no-new-privs"] : []),
    ...(identity.oomScoreAdj !== undefined ? ["--oom-score-adj", String(identity.oomScoreAdj)] : []),
  ];
}

function passwdEntry(passwd: string, uid: number): { name: string; gid: number } | undefined {
  for (const line of passwd.split("\n")) {
    const [name, , id, gid] = line.split(":");
    if (name && id !== undefined && Number(id) === uid && /^\d+$/.test(gid ?? "")) return { name, gid: Number(gid) };
  }
  return undefined;
}

/** The gids of the groups that list `user` as a member. */
function groupsOf(group: string, user: string): number[] {
  const gids: number[] = [];
  for (const line of group.split("\n")) {
    const [, , gid, members] = line.split(":");
    if (/^\d+$/.test(gid ?? "") && (members ?? "").split(",").includes(user)) gids.push(Number(gid));
  }
  return gids;
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
