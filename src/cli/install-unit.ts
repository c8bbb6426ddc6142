/**
 * `minikubelet install-unit`: puts the binary and the systemd unit in place the way a package would,
 * then says the two commands that enable the service. The unit is packaging/minikubelet.service
 * (embedded in the binary) with the manifests directory and the binary's path filled in; the
 * database path stays the one every command defaults to as root.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import unitTemplate from "../../packaging/minikubelet.service" with { type: "text" };
import { UserError } from "./errors.ts";

export const UNIT_PATH = "/etc/systemd/system/minikubelet.service";
export const DROP_IN_DIR = "/etc/systemd/system/minikubelet.service.d";
export const DEFAULT_BIN = "/usr/local/bin/minikubelet";
export const DEFAULT_MANIFESTS = "/etc/minikubelet/manifests";
export const ENABLE_COMMANDS = ["systemctl daemon-reload", "systemctl enable --now minikubelet"];

/** The template's lines that carry the two paths; each must occur exactly once. */
const MANIFESTS_LINE = `Environment="MINIKUBELET_MANIFESTS=${DEFAULT_MANIFESTS}"`;
const EXEC_START_PREFIX = `ExecStart=${DEFAULT_BIN} `;

export interface InstallUnitOptions {
  manifests?: string;
  bin?: string;
  /** Installs under this directory instead of / (tests, image builds). */
  root?: string;
  dryRun?: boolean;
}

export interface InstallUnitDeps {
  stdout: (text: string) => void;
  /** The compiled binary to install; undefined when running from source (nothing to copy). */
  executable: string | undefined;
}

/** The running executable when this is the compiled binary (its modules live in Bun's /$bunfs). */
export function compiledExecutable(): string | undefined {
  return Bun.main.startsWith("/$bunfs/") ? process.execPath : undefined;
}

export function installUnitCommand(options: InstallUnitOptions, deps: InstallUnitDeps = { stdout: (t) => process.stdout.write(t), executable: compiledExecutable() }): number {
  const bin = checkedPath("--bin", options.bin ?? DEFAULT_BIN);
  const manifests = checkedPath("--manifests", options.manifests ?? DEFAULT_MANIFESTS);
  const root = resolve(options.root ?? "/");
  const under = (path: string) => join(root, path);
  const unit = renderUnit({ bin, manifests });
  const verb = options.dryRun ? "would " : "";
  const say = (line: string) => deps.stdout(`${line}\n`);

  if (!options.dryRun) {
    for (const dir of [dirname(UNIT_PATH), DROP_IN_DIR, manifests, dirname(bin)]) mkdirSync(under(dir), { recursive: true });
  }
  if (deps.executable === undefined) {
    say(`not installing a binary: this is minikubelet run from source; put a release binary at ${bin}`);
  } else if (sameFile(deps.executable, under(bin))) {
    say(`${bin} is the running binary: left as it is`);
  } else {
    if (!options.dryRun) installBinary(deps.executable, under(bin));
    say(`${verb}install ${deps.executable} as ${under(bin)}`);
  }
  if (!options.dryRun) writeAtomically(under(UNIT_PATH), unit, 0o644);
  say(`${verb}write ${under(UNIT_PATH)} (manifests: ${manifests}, database: /var/lib/minikubelet/state.db)`);
  say(`flags: MINIKUBELET_EXTRA_ARGS in /etc/default/minikubelet, or a drop-in in ${DROP_IN_DIR}/`);
  if (options.dryRun) deps.stdout(`\n${unit}\n`);
  say(`then enable and start it:\n${ENABLE_COMMANDS.map((command) => `  ${command}`).join("\n")}`);
  return 0;
}

/** The packaged unit with this binary and manifests directory. */
export function renderUnit(paths: { bin: string; manifests: string }): string {
  return replaceOnce(replaceOnce(unitTemplate, MANIFESTS_LINE, `Environment="MINIKUBELET_MANIFESTS=${paths.manifests}"`), EXEC_START_PREFIX, `ExecStart=${paths.bin} `);
}

function replaceOnce(text: string, search: string, replacement: string): string {
  const at = text.indexOf(search);
  if (at < 0 || text.indexOf(search, at + 1) >= 0) throw new Error(`packaging/minikubelet.service must contain ${JSON.stringify(search)} exactly once`);
  return text.slice(0, at) + replacement + text.slice(at + search.length);
}

/**
 * An absolute path that systemd takes literally: whitespace and quotes would split or end the
 * value, `$` and `%` start variable and specifier expansion, `\` an escape.
 */
function checkedPath(flag: string, path: string): string {
  if (!isAbsolute(path)) throw new UserError(`${flag}: ${path} is not an absolute path (the service does not run from this directory)`);
  if (/[\s"'\\$%;]/.test(path)) throw new UserError(`${flag}: ${JSON.stringify(path)} has a character systemd would not take literally (whitespace, a quote, \\, $, % or ;)`);
  return resolve(path);
}

function sameFile(a: string, b: string): boolean {
  return existsSync(b) && realpathSync(a) === realpathSync(b);
}

/** Copied beside its destination, then renamed: a running service never sees a half-written binary. */
function installBinary(source: string, destination: string): void {
  const temporary = `${destination}.tmp-${process.pid}`;
  copyFileSync(source, temporary);
  chmodSync(temporary, 0o755);
  renameSync(temporary, destination);
}

function writeAtomically(path: string, content: string, mode: number): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, content, { mode });
  renameSync(temporary, path);
}
