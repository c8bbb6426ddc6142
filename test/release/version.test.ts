import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { versionLine } from "../../src/version.ts";
import { tempDir } from "../store-fixtures.ts";

const ROOT = resolve(import.meta.dir, "../..");

describe("--version", () => {
  test("names the commit the binary was built from", () => {
    expect(versionLine("0123456789ab")).toBe(`minikubelet ${pkg.version} (commit 0123456789ab; kubelet behaviour of Kubernetes 1.37.2)`);
    expect(versionLine("0123456789ab-dirty")).toBe(`minikubelet ${pkg.version} (commit 0123456789ab-dirty; kubelet behaviour of Kubernetes 1.37.2)`);
  });

  test("says so when there was no commit to embed, or no build at all", () => {
    expect(versionLine("")).toBe(`minikubelet ${pkg.version} (built outside git; kubelet behaviour of Kubernetes 1.37.2)`);
    expect(versionLine(undefined)).toBe(`minikubelet ${pkg.version} (run from source; kubelet behaviour of Kubernetes 1.37.2)`);
  });

  test("a binary built from a source tree outside git says so, and builds again to the same bytes", () => {
    using dir = tempDir("minikubelet-nogit-");
    for (const part of ["src", "monitor/build", "monitor/minikubelet-monitor.c", "migrations", "packaging", "scripts/build", "package.json", "tsconfig.json", "bunfig.toml"]) {
      if (part.includes("/")) mkdirSync(join(dir.path, part, ".."), { recursive: true });
      cpSync(join(ROOT, part), join(dir.path, part), { recursive: true });
    }
    symlinkSync(join(ROOT, "node_modules"), join(dir.path, "node_modules"));
    const built = spawnSync(join(dir.path, "scripts/build"), { cwd: dir.path, encoding: "utf8" });
    expect(built.stderr).toContain("built minikubelet");
    const version = spawnSync(join(dir.path, "minikubelet"), ["--version"], { encoding: "utf8" });
    expect(version.stdout).toBe(`minikubelet ${pkg.version} (built outside git; kubelet behaviour of Kubernetes 1.37.2)\n`);

    // Nothing that changes between two builds (a time, the output directory) goes into the binary,
    // so a release's checksums can be checked by building the same commit again.
    const again = join(dir.path, "again");
    mkdirSync(again);
    expect(spawnSync(join(dir.path, "scripts/build"), [join(again, "minikubelet")], { cwd: dir.path }).status).toBe(0);
    const digest = (file: string) => new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
    expect(digest(join(again, "minikubelet"))).toBe(digest(join(dir.path, "minikubelet")));
  });
});
