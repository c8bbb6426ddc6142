/**
 * Process-runtime tests on this host's cgroups: each test file's runtimes get an identity of their
 * own (never the shared "unowned" parent another file or another checkout's tests also use), and the
 * file's teardown removes that identity's cgroups, so no empty directory is left under
 * /sys/fs/cgroup/<controller>/minikubelet/.
 */
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { Cgroups, detectHostCgroupMode } from "../src/runtime/process/cgroups.ts";

/**
 * Why this host's cgroups cannot be written (a probe parent is made, then removed again), or
 * undefined when they can: what the tests on real cgroups need.
 */
export function hostCgroupsMissing(): string | undefined {
  const mode = detectHostCgroupMode();
  if (mode.kind === "unavailable") return `no usable cgroups: ${mode.reason}`;
  const probe = new Cgroups(mode, `probe-${process.pid}-${randomBytes(2).toString("hex")}`);
  const reason = probe.prepare();
  probe.release();
  return reason === undefined ? undefined : `no usable cgroups: ${reason}`;
}

export interface TestCgroupIdentities {
  /**
   * The owner for every ProcessRuntime on `rootDir`: one identity per root, so a runtime's start-up
   * sweep never meets another root's containers, and runtimes reopening a root still own its records.
   */
  ownerFor(rootDir: string): string;
  /** Removes every cgroup of these identities, then their parents; a process still in one is killed. */
  cleanup(): Promise<void>;
}

export function testCgroupIdentities(): TestCgroupIdentities {
  const owners = new Map<string, string>();
  return {
    ownerFor(rootDir) {
      let owner = owners.get(rootDir);
      if (!owner) owners.set(rootDir, (owner = randomBytes(16).toString("hex")));
      return owner;
    },
    async cleanup() {
      for (const owner of owners.values()) await removeIdentityCgroups(owner);
      owners.clear();
    },
  };
}

/** A killed process holds its cgroup until it is reaped: each removal is tried again for up to 2 s. */
export async function removeIdentityCgroups(identity: string): Promise<void> {
  const mode = detectHostCgroupMode();
  if (mode.kind === "unavailable") return;
  const cgroups = new Cgroups(mode, identity);
  const roots = mode.kind === "v1" ? [mode.memory, mode.cpu, mode.pids, mode.cpuacct].filter((root): root is string => root !== undefined) : [mode.root];
  const exists = (id: string) => roots.some((root) => existsSync(`${root}/minikubelet/${identity}/${id}`));
  for (const id of cgroups.containerIds()) {
    for (let tries = 0; tries < 40 && exists(id); tries++) {
      cgroups.remove(id);
      if (exists(id)) await new Promise((done) => setTimeout(done, 50));
    }
  }
  cgroups.release();
}
