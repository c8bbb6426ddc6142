/** Fake cgroup trees in a temp dir (v1: a hierarchy per controller; v2: one unified tree), with the mountinfo lines that describe them. */
import { mkdirSync, writeFileSync } from "node:fs";
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
