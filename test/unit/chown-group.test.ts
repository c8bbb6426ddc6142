/**
 * The fsGroup's group on what the agent makes for a volume, and the owner kept: Bun 1.3 turns
 * chown's "-1, keep the owner" into 4294967294, which made a container see its volume's files
 * owned by nobody.
 */
import { expect } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { chownGroup } from "../../src/host/chown-group.ts";
import { writeAtomically } from "../../src/kubelet/volumes/atomic-writer.ts";
import { tempDir } from "../store-fixtures.ts";
import { testNeeding } from "../requirements.ts";

const rootMissing = () => (process.getuid?.() === 0 ? undefined : "it needs root (giving a file another group)");

testNeeding("chownGroup gives the group and keeps the owner", rootMissing(), () => {
  using dir = tempDir("minikubelet-chown-");
  const made = join(dir.path, "made");
  mkdirSync(made);
  chownGroup(made, 123);
  expect({ uid: statSync(made).uid, gid: statSync(made).gid }).toEqual({ uid: 0, gid: 123 });
});

testNeeding("a volume the kubelet fills, with the pod's fsGroup: its data directory and files are the group's and still root's", rootMissing(), () => {
  using dir = tempDir("minikubelet-chown-");
  const target = join(dir.path, "vol");
  writeAtomically(target, [{ path: "conf/key", content: "value", mode: 0o644 }], 0, 123);
  // Through the ..data link: the timestamped directory, a directory in it, the file.
  for (const path of [join(target, "..data"), join(target, "..data", "conf"), join(target, "conf", "key")]) {
    expect({ path, uid: statSync(path).uid, gid: statSync(path).gid }).toEqual({ path, uid: 0, gid: 123 });
  }
});
