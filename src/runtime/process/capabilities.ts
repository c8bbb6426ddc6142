/**
 * Linux capabilities by name, and the set a container's process keeps, as containerd's CRI plugin
 * makes it (pkg/cri's WithCapabilities and TweakCapabilities): the runtime's defaults, or every
 * capability with `add: [ALL]`, less `drop` (all of them with `drop: [ALL]`), plus `add`. Names are
 * taken with or without `CAP_`, in any case, as containerd takes them.
 */

/** Every capability, at its number (linux/capability.h). */
const CAPABILITY_NAMES: readonly string[] = [
  "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
  "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
  "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
  "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
  "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
  "CHECKPOINT_RESTORE",
];

/** What a container that is not privileged keeps when its spec says nothing: containerd's (and the engine's) defaults. */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP",
  "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
];

const ALL = "ALL";

function normalized(name: string): string {
  const upper = name.toUpperCase();
  return upper.startsWith("CAP_") ? upper.slice(4) : upper;
}

/**
 * The capabilities kept, as a mask (bit N: capability N), for `add` and `drop` over the defaults;
 * an unknown name is an error naming it.
 */
export function capabilityMask(add: readonly string[], drop: readonly string[]): bigint {
  const adds = add.map(normalized);
  const drops = drop.map(normalized);
  for (const [list, names] of [["add", adds], ["drop", drops]] as const) {
    const unknown = names.find((name) => name !== ALL && !CAPABILITY_NAMES.includes(name));
    if (unknown !== undefined) throw new Error(`capabilities.${list}: unknown capability "${unknown}"`);
  }
  const base = adds.includes(ALL) ? CAPABILITY_NAMES : DEFAULT_CAPABILITIES;
  const kept = new Set(drops.includes(ALL) ? [] : base.filter((name) => !drops.includes(name)));
  for (const name of adds) if (name !== ALL) kept.add(name);
  let mask = 0n;
  for (const name of kept) mask |= 1n << BigInt(CAPABILITY_NAMES.indexOf(name));
  return mask;
}
