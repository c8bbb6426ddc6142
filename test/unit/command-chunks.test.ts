/**
 * What each command loads at start-up, read from the bundle as scripts/build splits it (a chunk per
 * command, loaded by the command's import()): the modules a chunk imports statically are parsed
 * before the command's first line runs, so a library there costs every run of that command.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

/** Chunk file name -> its text (unminified whitespace: each module starts with a `// path` line). */
const chunks = new Map<string, string>();
const outdir = mkdtempSync(join(tmpdir(), "minikubelet-chunks-"));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

// Built by `bun build` in a process of its own, not Bun.build in the test process: an in-process
// build now and then never settled late in a full run (the hook timed out at 60 s), and a bundler
// stuck inside the test process can stall every file after it.
beforeAll(async () => {
  const build = Bun.spawn([process.execPath, "build", "--splitting", "--target", "bun", "--minify-syntax", "--outdir", outdir, join(ROOT, "src/main.ts")], {
    cwd: ROOT,
    stdout: "ignore",
    stderr: "pipe",
    timeout: 50_000,
  });
  const [exitCode, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  expect({ exitCode, stderr: exitCode === 0 ? "" : stderr }).toEqual({ exitCode: 0, stderr: "" });
  for (const name of readdirSync(outdir)) if (name.endsWith(".js")) chunks.set(name, readFileSync(join(outdir, name), "utf8"));
});

const modulesIn = (text: string) => [...text.matchAll(/^\/\/ (\S+)$/gm)].map((match) => match[1]!).filter((line) => line !== "@bun");
const staticImports = (text: string) => [...text.matchAll(/(?:from|import)\s*"\.\/([^"]+\.js)"/g)].map((match) => match[1]!);

/** The chunk that holds `module` and every chunk it imports statically: what is loaded with it. */
function loadedChunks(module: string): string[] {
  const start = [...chunks].find(([, text]) => modulesIn(text).includes(module))?.[0];
  if (!start) throw new Error(`no chunk holds ${module}`);
  const seen = new Set<string>();
  const pending = [start];
  while (pending.length > 0) {
    const chunk = pending.pop()!;
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    pending.push(...staticImports(chunks.get(chunk)!));
  }
  return [...seen];
}

/** The source modules loaded with the chunk that holds `module`. */
const loadedWith = (module: string) => loadedChunks(module).flatMap((chunk) => modulesIn(chunks.get(chunk)!));

/** The builtins (node:fs, ...) the chunks loaded with the one that holds `module` import as ES modules. */
function builtinsImportedWith(module: string): string[] {
  const texts = loadedChunks(module).map((chunk) => chunks.get(chunk)!);
  return [...new Set(texts.flatMap((text) => [...text.matchAll(/from\s*"((?:node:)?[a-z_/]+)"/g)].map((match) => match[1]!.replace(/^node:/, ""))))].sort();
}

/** The npm packages among `modules`. */
function packages(modules: string[]): string[] {
  const names = modules.filter((module) => module.includes("node_modules/")).map((module) => module.replace(/^.*node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, "$1"));
  return [...new Set(names)].sort();
}

describe("what a command loads before it starts", () => {
  test("--version: the version line, not even the command line's parser", () => {
    expect(loadedWith("src/main.ts").sort()).toEqual(["package.json", "src/cli/stdio.ts", "src/main.ts", "src/version.ts"]);
    expect(builtinsImportedWith("src/main.ts")).toEqual([]);
  });

  test.each(["get", "describe"])("%s: the database and the printers, no other library (dockerode, yaml), no agent, no API server", (command) => {
    const modules = loadedWith(`src/cli/${command}/${command}.ts`);
    expect(modules).toContain("src/store/reader.ts");
    // cac is the entry's (cli.ts) and loaded before any command; a command chunk may share it or not.
    expect(packages(modules).filter((name) => name !== "cac")).toEqual([]);
    expect(modules.filter((module) => /^src\/(api|kubelet\/kubelet|runtime)\b/.test(module))).toEqual([]);
  });

  test.each(["get", "describe"])("%s: node:fs by require(), not as an ES module (Bun 1.3 then loads node:stream for its ReadStream)", (command) => {
    expect(builtinsImportedWith(`src/cli/${command}/${command}.ts`)).not.toContain("fs");
  });
});

test("logs of a docker attempt: the engine is read with fetch, dockerode is never loaded", () => {
  const modules = loadedWith("src/cli/logs/docker-log-reader.ts");
  expect(modules).toContain("src/runtime/docker/docker-logs.ts");
  expect(packages(modules)).not.toContain("dockerode");
  expect(modules).not.toContain("src/runtime/docker/docker.ts");
});
