/** Fake cgroup trees in a temp dir (v1: a hierarchy per controller; v2: one unified tree), with the mountinfo lines that describe them. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function mountLine(id: number, mountPoint: string, fsType: string, superOptions: string): string {
  return `${id} 31 0:${id} / ${mountPoint} rw,relatime - ${fsType} ${fsType} ${superOptions}`;
}

/** A v1 host like this one: a hierarchy per controller, plus the empty hybrid cgroup2. */
export function fakeV1(root: string, { memsw = true } = {}): string {
  for (const controller of ["memory", "cpu", "pids"]) mkdirSync(join(root, controller));
  if (memsw) writeFileSync(join(root, "memory", "memory.memsw.limit_in_bytes"), "9223372036854771712\n");
  mkdirSync(join(root, "unified"));
  return [
    mountLine(32, join(root, "cpu"), "cgroup", "rw,cpu"),
    mountLine(35, join(root, "memory"), "cgroup", "rw,memory"),
    mountLine(39, join(root, "pids"), "cgroup", "rw,pids"),
    mountLine(41, join(root, "unified"), "cgroup2", "rw"),
  ].join("\n");
}

export function fakeV2(root: string, controllers = "cpuset cpu io memory pids"): string {
  writeFileSync(join(root, "cgroup.controllers"), `${controllers}\n`);
  return mountLine(29, root, "cgroup2", "rw,nsdelegate");
}

/** The memory limit the kernel enforces on a host process, read from its own cgroup (v1 or v2). */
export function hostMemoryLimitOf(pid: number): string {
  const path = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").find((line) => /:memory:/.test(line) || line.startsWith("0::"))!.replace(/^[^:]*:[^:]*:/, "");
  const file = existsSync("/sys/fs/cgroup/memory") ? `/sys/fs/cgroup/memory${path}/memory.limit_in_bytes` : `/sys/fs/cgroup${path}/memory.max`;
  return readFileSync(file, "utf8").trim();
}
