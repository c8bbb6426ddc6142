import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_BIN, DEFAULT_MANIFESTS, DROP_IN_DIR, installUnitCommand, renderUnit, UNIT_PATH } from "../../src/cli/install-unit.ts";
import { UserError } from "../../src/cli/errors.ts";
import { tempDir } from "../store-fixtures.ts";
import { testNeeding } from "../requirements.ts";

/** A stand-in for the compiled binary that install-unit copies into place. */
function fakeExecutable(dir: string): string {
  const path = join(dir, "build", "minikubelet");
  mkdirSync(join(dir, "build"));
  writeFileSync(path, "#!/bin/sh\necho fake\n", { mode: 0o700 });
  return path;
}

function install(options: Parameters<typeof installUnitCommand>[0], executable: string | undefined) {
  let out = "";
  const code = installUnitCommand(options, { stdout: (text) => (out += text), executable });
  return { code, out };
}

describe("install-unit", () => {
  test("puts the binary and the unit under --root, with the manifests directory and binary path given", () => {
    using dir = tempDir();
    const root = join(dir.path, "root");
    const { code, out } = install({ root, manifests: "/srv/pods", bin: "/opt/minikubelet/minikubelet" }, fakeExecutable(dir.path));
    expect(code).toBe(0);

    const unit = readFileSync(join(root, UNIT_PATH), "utf8");
    expect(unit).toContain('\nEnvironment="MINIKUBELET_MANIFESTS=/srv/pods"\n');
    expect(unit).toContain('\nEnvironment="MINIKUBELET_DB=/var/lib/minikubelet/state.db"\n');
    expect(unit).toContain("\nExecStart=/opt/minikubelet/minikubelet run --manifests ${MINIKUBELET_MANIFESTS} --db ${MINIKUBELET_DB} $MINIKUBELET_EXTRA_ARGS\n");
    expect(unit).toContain("\nEnvironmentFile=-/etc/default/minikubelet\n");
    expect(unit).toContain("\nRestart=always\n");
    expect(unit).toContain("\nRestartSec=10\n");
    // The agent alone is signalled: the process runtime's monitors share its control group.
    expect(unit).toContain("\nKillMode=process\n");
    expect(unit).not.toContain("/usr/local/bin/minikubelet");
    expect(statSync(join(root, UNIT_PATH)).mode & 0o777).toBe(0o644);

    const installed = join(root, "opt/minikubelet/minikubelet");
    expect(readFileSync(installed, "utf8")).toBe("#!/bin/sh\necho fake\n");
    expect(statSync(installed).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, "srv/pods")).isDirectory()).toBe(true);
    expect(statSync(join(root, DROP_IN_DIR)).isDirectory()).toBe(true);
    expect(out).toEndWith("then enable and start it:\n  systemctl daemon-reload\n  systemctl enable --now minikubelet\n");
  });

  test("with the default paths, the unit is packaging/minikubelet.service as the tarballs carry it", () => {
    const packaged = readFileSync(join(import.meta.dir, "../../packaging/minikubelet.service"), "utf8");
    expect(renderUnit({ bin: DEFAULT_BIN, manifests: DEFAULT_MANIFESTS })).toBe(packaged);
  });

  test("defaults to /usr/local/bin and /etc/minikubelet/manifests, and leaves no temporary file behind", () => {
    using dir = tempDir();
    const root = join(dir.path, "root");
    install({ root }, fakeExecutable(dir.path));
    const unit = readFileSync(join(root, UNIT_PATH), "utf8");
    expect(unit).toContain('\nEnvironment="MINIKUBELET_MANIFESTS=/etc/minikubelet/manifests"\n');
    expect(unit).toContain("\nExecStart=/usr/local/bin/minikubelet run ");
    expect(existsSync(join(root, "usr/local/bin/minikubelet"))).toBe(true);
    expect(spawnSync("find", [root, "-name", "*.tmp-*"], { encoding: "utf8" }).stdout).toBe("");
  });

  test("--dry-run prints the unit and writes nothing", () => {
    using dir = tempDir();
    const root = join(dir.path, "root");
    const { code, out } = install({ root, dryRun: true, manifests: "/srv/pods" }, fakeExecutable(dir.path));
    expect(code).toBe(0);
    expect(existsSync(root)).toBe(false);
    expect(out).toContain(`would write ${join(root, UNIT_PATH)}`);
    expect(out).toContain('Environment="MINIKUBELET_MANIFESTS=/srv/pods"');
  });

  test("run from source, it writes the unit and says the binary is not installed", () => {
    using dir = tempDir();
    const root = join(dir.path, "root");
    const { out } = install({ root }, undefined);
    expect(out).toStartWith("not installing a binary: this is minikubelet run from source; put a release binary at /usr/local/bin/minikubelet\n");
    expect(existsSync(join(root, UNIT_PATH))).toBe(true);
    expect(existsSync(join(root, "usr/local/bin/minikubelet"))).toBe(false);
  });

  test("a path systemd would not take literally is refused, naming the flag", () => {
    using dir = tempDir();
    expect(() => install({ root: dir.path, manifests: "pods" }, undefined)).toThrow(new UserError("--manifests: pods is not an absolute path (the service does not run from this directory)"));
    expect(() => install({ root: dir.path, bin: "/opt/my bin/minikubelet" }, undefined)).toThrow(/^--bin: "\/opt\/my bin\/minikubelet" has a character systemd would not take literally/);
    expect(existsSync(join(dir.path, UNIT_PATH))).toBe(false);
  });

  // systemd-analyze checks the unit as systemd would load it, including that ExecStart's binary exists.
  const analyzeMissing = spawnSync("systemd-analyze", ["--version"]).status === 0 ? undefined : "systemd-analyze is not installed (Debian's systemd package has it)";
  testNeeding("systemd-analyze verify accepts the written unit", analyzeMissing, () => {
    using dir = tempDir();
    const root = join(dir.path, "root");
    install({ root, bin: "/bin/true" }, undefined);
    const verified = spawnSync("systemd-analyze", ["verify", join(root, UNIT_PATH)], { encoding: "utf8" });
    expect(verified.stderr).toBe("");
    expect(verified.status).toBe(0);
  });
});
