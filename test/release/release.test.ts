import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { binaryOf, checksums, DIST, ensureRelease, ROOT, tarballOf, VERSION } from "./release-build.ts";
import { KUBE_VERSION } from "../../src/version.ts";
import { testNeeding } from "../requirements.ts";

/** The targets this machine runs: x64 natively, arm64 under qemu-user. */
const TARGETS = ["linux-x64", "linux-x64-baseline", "linux-arm64"];
const NATIVE = ["linux-x64", "linux-x64-baseline"];
const ENV = { ...process.env, TZ: "UTC", NO_COLOR: "1" };

/** qemu-user and the arm64 C library the (glibc) arm64 binary loads: Debian's qemu-user and libc6-arm64-cross. */
const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";
const qemu = ["qemu-aarch64", "qemu-aarch64-static"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);
const arm64Missing = !qemu
  ? "qemu-aarch64 not found (Debian's qemu-user)"
  : !existsSync(join(ARM64_SYSROOT, "lib/ld-linux-aarch64.so.1"))
    ? `no arm64 C library in ${ARM64_SYSROOT} (Debian's libc6-arm64-cross)`
    : undefined;

let db = "";
let dbDir: ReturnType<typeof tempDir>;

beforeAll(async () => {
  ensureRelease(TARGETS);
  dbDir = tempDir("minikubelet-release-");
  const h = storeHarness(dbDir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] }), pod({ name: "crash", containers: [container("crash")] })));
  await h.advance(5);
  h.agent.close();
  db = h.dbPath;
  return () => dbDir[Symbol.dispose]();
}, 600_000);

function run(command: string[], args: string[]): { status: number | null; stdout: string; stderr: string } {
  const [program, ...rest] = command as [string, ...string[]];
  return spawnSync(program, [...rest, ...args], { cwd: ROOT, env: ENV, encoding: "utf8" });
}

/** The same CLI run from source, which every compiled binary must match. */
const FROM_SOURCE = [join(ROOT, "node_modules/.bin/bun"), "src/main.ts"];
const sourceOutputs = new Map<string, string>();
/** What the same command prints run from source: the compiled binary must print the same. */
function fromSource(args: string[]): string {
  const key = args.join(" ");
  if (!sourceOutputs.has(key)) {
    const result = run(FROM_SOURCE, args);
    expect(result.status).toBe(0);
    sourceOutputs.set(key, result.stdout);
  }
  return sourceOutputs.get(key)!;
}

/** --version, validate and get on a database: the commands a user tries first on a new host. */
function checkBinary(command: string[]): void {
  const version = run(command, ["--version"]);
  expect(version.stdout).toMatch(new RegExp(`^minikubelet ${VERSION.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?; kubelet behaviour of Kubernetes ${KUBE_VERSION.replaceAll(".", "\\.")}\\)\\n$`));

  const validate = run(command, ["validate", "examples"]);
  expect(validate.stderr).toBe("");
  expect(validate.status).toBe(0);
  expect(validate.stdout).toBe(fromSource(["validate", "examples"]));

  // AGE is relative to now, and a day boundary of the fixture's age may pass during a slow (qemu)
  // run: the source prints it just before and just after, and the binary must print one of the two.
  const args = ["get", "pods", "-A", "--db", db];
  const sourceBefore = run(FROM_SOURCE, args);
  const get = run(command, args);
  const sourceAfter = run(FROM_SOURCE, args);
  expect(get.status).toBe(0);
  expect(get.stdout).toContain("web-lab");
  expect([sourceBefore.stdout, sourceAfter.stdout]).toContain(get.stdout);
}

describe("the release", () => {
  test("SHA256SUMS lists each binary and tarball with its digest", async () => {
    const sums = checksums();
    for (const file of TARGETS.flatMap((target) => [binaryOf(target), tarballOf(target)])) {
      const name = file.slice(DIST.length + 1);
      const digest = new Bun.CryptoHasher("sha256").update(await Bun.file(file).arrayBuffer()).digest("hex");
      expect(`${name} ${sums.get(name)}`).toBe(`${name} ${digest}`);
    }
  });

  test.each(TARGETS)("the %s tarball holds the binary, README.md, LICENSE and the unit, owned by root", (target) => {
    using out = tempDir("minikubelet-tarball-");
    const top = `minikubelet-${VERSION}-${target}`;
    // One decompression: the verbose extraction is the listing, with modes and numeric owners.
    const extracted = run(["tar", "--numeric-owner", "-xvvzf", tarballOf(target), "-C", out.path], []);
    expect(extracted.status).toBe(0);
    const listing = extracted.stdout.trim().split("\n").map((line) => line.split(/\s+/));
    expect(listing.map((fields) => `${fields[0]} ${fields[1]} ${fields.at(-1)}`)).toEqual([
      `drwxr-xr-x 0/0 ${top}/`,
      `-rw-r--r-- 0/0 ${top}/LICENSE`,
      `-rw-r--r-- 0/0 ${top}/README.md`,
      `-rwxr-xr-x 0/0 ${top}/minikubelet`,
      `-rw-r--r-- 0/0 ${top}/minikubelet.service`,
    ]);
    const packed = new Bun.CryptoHasher("sha256").update(readFileSync(join(out.path, top, "minikubelet"))).digest("hex");
    expect(packed).toBe(checksums().get(`minikubelet-${target}`)!);
    expect(readFileSync(join(out.path, top, "minikubelet.service"), "utf8")).toBe(readFileSync(join(ROOT, "packaging/minikubelet.service"), "utf8"));
    expect(readFileSync(join(out.path, top, "LICENSE"), "utf8")).toBe(readFileSync(join(ROOT, "LICENSE"), "utf8"));
  });

  test.each(NATIVE)("the %s binary runs --version, validate and get", (target) => {
    checkBinary([binaryOf(target)]);
  });

  test("the compiled binary's install-unit installs itself and the unit it embeds", () => {
    using root = tempDir("minikubelet-install-root-");
    const installed = run([binaryOf("linux-x64")], ["install-unit", "--root", root.path]);
    expect(installed.stderr).toBe("");
    expect(installed.stdout).toStartWith(`install ${binaryOf("linux-x64")} as ${join(root.path, "usr/local/bin/minikubelet")}\n`);
    const digest = new Bun.CryptoHasher("sha256").update(readFileSync(join(root.path, "usr/local/bin/minikubelet"))).digest("hex");
    expect(digest).toBe(checksums().get("minikubelet-linux-x64")!);
    const unit = readFileSync(join(root.path, "etc/systemd/system/minikubelet.service"), "utf8");
    expect(unit).toBe(readFileSync(join(ROOT, "packaging/minikubelet.service"), "utf8"));
  });

  testNeeding("the linux-arm64 binary runs --version, validate and get under qemu-user", arm64Missing, () => {
    checkBinary([qemu!, "-L", ARM64_SYSROOT, binaryOf("linux-arm64")]);
  }, 240_000);

  test("a failure names the target", () => {
    const result = run([join(ROOT, "scripts/release")], ["linux-x64", "linux-sparc"]);
    expect(result.status).toBe(1);
    expect(result.stderr).toStartWith("release: linux-sparc: unknown target (known: linux-x64 linux-x64-baseline linux-arm64 ");
  });
});
