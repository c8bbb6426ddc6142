/**
 * `minikubelet kubeconfig --output FILE` (issue 26): the file holds the token, so it is written by
 * the command itself, 0600 in a directory made 0700, atomically, with the text stdout would carry;
 * a path it cannot write is one line on stderr and exit 1. Through the real CLI, under umask 022.
 */
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureCredentials, recordServerAddress } from "../../src/api/http/tls.ts";
import { tempDir } from "../store-fixtures.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const ENV = { ...process.env, TZ: "UTC", NO_COLOR: "1" };

function kubeconfig(db: string, ...args: string[]) {
  // sh sets the umask a login shell would give, whatever the test runner's is.
  const command = ["umask 022; exec \"$0\" \"$@\"", BUN, join(ROOT, "src/main.ts"), "kubeconfig", "--db", db, ...args];
  return spawnSync("/bin/sh", ["-c", ...command], { env: ENV, encoding: "utf8" });
}

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

test("--output writes stdout's kubeconfig to the file, 0600, its missing directory 0700, nothing else left", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  ensureCredentials(db);
  recordServerAddress(db, "https://127.0.0.1:6443");
  const printed = kubeconfig(db);
  expect(printed.status).toBe(0);
  expect(printed.stdout).toContain("token: ");

  const file = join(dir.path, "home", ".kube", "minikubelet");
  const written = kubeconfig(db, "--output", file);
  expect({ status: written.status, stdout: written.stdout, stderr: written.stderr }).toEqual({ status: 0, stdout: "", stderr: "" });
  expect(readFileSync(file, "utf8")).toBe(printed.stdout);
  expect({ file: modeOf(file), kube: modeOf(join(dir.path, "home", ".kube")), home: modeOf(join(dir.path, "home")) }).toEqual({ file: "600", kube: "700", home: "700" });

  // A file a redirect left 0644 is replaced by a private one, and no temp file stays beside it.
  writeFileSync(file, "old", { mode: 0o644 });
  expect(kubeconfig(db, "--output", file).status).toBe(0);
  expect({ mode: modeOf(file), same: readFileSync(file, "utf8") === printed.stdout }).toEqual({ mode: "600", same: true });
  expect(readdirSync(join(dir.path, "home", ".kube"))).toEqual(["minikubelet"]);
});

test("--output to a path it cannot write: one line naming the file, exit 1", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  ensureCredentials(db);
  recordServerAddress(db, "https://127.0.0.1:6443");
  const blocker = join(dir.path, "not-a-dir");
  writeFileSync(blocker, "");
  const file = join(blocker, "kubeconfig");
  const result = kubeconfig(db, "--output", file);
  expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
    status: 1,
    stdout: "",
    stderr: `error: cannot write the kubeconfig to ${file}: a part of the path is not a directory\n`,
  });
});
