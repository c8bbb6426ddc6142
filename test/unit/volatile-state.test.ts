/**
 * Where the process runtime's records may go (host/volatile-state.ts): only a tmpfs, and only a
 * directory of the agent's own that nobody else can open or have planted (a world-writable
 * /dev/shm lets anyone create the name first).
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstPrivateTmpfsDir } from "../../src/host/volatile-state.ts";

const made: string[] = [];
function temp(parent: string): string {
  const dir = mkdtempSync(join(parent, "minikubelet-volatile-"));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
const uid = process.getuid?.() ?? 0;

test("a parent on a disk is passed over for the tmpfs one, whose directory is made 0700", () => {
  const disk = temp(tmpdir());
  const shm = temp("/dev/shm");
  expect(firstPrivateTmpfsDir([[disk, "minikubelet"], [shm, "minikubelet"]], uid)).toBe(join(shm, "minikubelet"));
  expect(statSync(join(shm, "minikubelet")).mode & 0o777).toBe(0o700);
});

test("a directory already there and private is taken as it is", () => {
  const shm = temp("/dev/shm");
  mkdirSync(join(shm, "minikubelet"), { mode: 0o700 });
  expect(firstPrivateTmpfsDir([[shm, "minikubelet"]], uid)).toBe(join(shm, "minikubelet"));
});

test("a link planted at the name, a directory open to others, or another user's is refused", () => {
  const shm = temp("/dev/shm");
  const target = temp("/dev/shm");
  symlinkSync(target, join(shm, "linked"));
  mkdirSync(join(shm, "open"));
  chmodSync(join(shm, "open"), 0o777);
  mkdirSync(join(shm, "theirs"), { mode: 0o700 });
  expect(firstPrivateTmpfsDir([[shm, "linked"], [shm, "open"]], uid)).toBeUndefined();
  expect(firstPrivateTmpfsDir([[shm, "theirs"]], uid + 1)).toBeUndefined();
});

test("no tmpfs at all: undefined, and the records stay under the runtime root", () => {
  expect(firstPrivateTmpfsDir([[temp(tmpdir()), "minikubelet"]], uid)).toBeUndefined();
});
