/**
 * The release the tests check: dist/ as scripts/release makes it, rebuilt once per suite run and
 * only when something it is made of is newer than what dist/ holds (a full `scripts/release` run
 * beforehand is reused as it is).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };

export const ROOT = resolve(import.meta.dir, "../..");
export const DIST = join(ROOT, "dist");
export const VERSION = pkg.version;

/** What a release is built from: a change to any of these makes dist/ stale. */
const INPUTS = ["src", "monitor", "migrations", "packaging", "package.json", "package-lock.json", "scripts/build", "scripts/release", "README.md", "LICENSE"];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newestMtime(join(path, entry))));
}

export const binaryOf = (target: string) => join(DIST, `minikubelet-${target}`);
export const tarballOf = (target: string) => join(DIST, `minikubelet-${VERSION}-${target}.tar.gz`);

/** The SHA256SUMS lines as file name -> digest. */
export function checksums(): Map<string, string> {
  const file = join(DIST, "SHA256SUMS");
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  return new Map(lines.map((line) => {
    const [digest, name] = line.split(/ +\*?/) as [string, string];
    return [name, digest];
  }));
}

/** Runs scripts/release for `targets` unless dist/ already holds them, newer than their inputs. */
export function ensureRelease(targets: string[]): void {
  const inputs = Math.max(...INPUTS.map((input) => newestMtime(join(ROOT, input))));
  const sums = checksums();
  const fresh = targets.every((target) =>
    [binaryOf(target), tarballOf(target)].every((file) => existsSync(file) && statSync(file).mtimeMs >= inputs && sums.has(file.slice(DIST.length + 1))),
  );
  if (fresh) return;
  const started = performance.now();
  const built = spawnSync(join(ROOT, "scripts/release"), targets, { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`scripts/release ${targets.join(" ")} failed (exit ${built.status}): ${built.stderr}`);
  // The cost of the suite's release build, visible in every run that pays it.
  console.error(`scripts/release ${targets.join(" ")}: ${((performance.now() - started) / 1000).toFixed(1)}s`);
}
