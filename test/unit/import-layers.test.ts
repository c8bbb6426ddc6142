/**
 * Seams run one way (issue 22): no import circle between files, and every import across folders
 * goes down this list, from a consumer to what it consumes, so no folder imports its consumer. A
 * new folder must be placed in the list before anything imports it.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");

/**
 * Lowest first. A folder whose subfolders are layers of their own lists each of them where it
 * belongs: `api/http` below `api/watch` ... below `api` (its top-level files, the assembly), and
 * `runtime` (its top-level files, the contract both runtimes implement) below `runtime/process`
 * and `runtime/docker`. `(leaf)` is the top-level modules other than main.ts (clock, version, node name,
 * the event record): shared facts that import no folder above manifest.
 */
const LAYERS = [
  "manifest",
  "(leaf)",
  "host",
  "v1",
  "printers",
  "runtime",
  "runtime/process",
  "runtime/docker",
  "eviction",
  "stats",
  "prober",
  "pleg",
  "kubelet",
  "store",
  "node",
  "config",
  "logs",
  "api/protobuf",
  "api/http",
  "api/patch",
  "api/watch",
  "api/resources",
  "api/streaming",
  "api/portforward",
  "api/discovery",
  "api",
  "server",
  "tools/timeline",
  "tools/review",
  "tools/triage",
  "tools",
  "agent",
  "cli",
  "(main)",
] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

function layerOf(file: string): string {
  const path = relative(SRC, file);
  if (!path.includes("/")) return path === "main.ts" ? "(main)" : "(leaf)";
  const [folder, sub, ...rest] = path.split("/");
  const sublayer = `${folder}/${sub}`;
  return rest.length > 0 && (LAYERS as readonly string[]).includes(sublayer) ? sublayer : folder!;
}

/** Relative imports (static, re-exports and dynamic), resolved to files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.[^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s+["'](\.[^"']+)["']/gm),
    ...text.matchAll(/import\(\s*["'](\.[^"']+)["']\s*\)/g),
  ].map((match) => match[1]!);
  return specifiers.filter((specifier) => specifier.endsWith(".ts")).map((specifier) => resolve(dirname(file), specifier));
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => files.includes(target))]));

test("every folder of src/ has its place in the layers", () => {
  const unplaced = [...new Set(files.map(layerOf))].filter((layer) => !(LAYERS as readonly string[]).includes(layer));
  expect(unplaced).toEqual([]);
});

test("every import across folders goes from a consumer down to what it uses", () => {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    const from = LAYERS.indexOf(layerOf(file) as (typeof LAYERS)[number]);
    for (const target of targets) {
      const to = LAYERS.indexOf(layerOf(target) as (typeof LAYERS)[number]);
      if (to > from) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  expect(upward).toEqual([]);
});

test("no import circle between files", () => {
  // Tarjan's strongly connected components: a component of more than one file is a circle.
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indices = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    indices.set(file, index);
    lowlinks.set(file, index++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!indices.has(target)) {
        visit(target);
        lowlinks.set(file, Math.min(lowlinks.get(file)!, lowlinks.get(target)!));
      } else if (onStack.has(target)) {
        lowlinks.set(file, Math.min(lowlinks.get(file)!, indices.get(target)!));
      }
    }
    if (lowlinks.get(file) !== indices.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(SRC, member));
    } while (member !== file);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const file of files) if (!indices.has(file)) visit(file);
  expect(circles).toEqual([]);
});

test("the two runtimes share only the contract at runtime/'s root, never each other's files", () => {
  const across = [...graph].flatMap(([file, targets]) =>
    targets
      .filter((target) => {
        const [from, to] = [layerOf(file), layerOf(target)];
        return from !== to && from.startsWith("runtime/") && to.startsWith("runtime/");
      })
      .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
  );
  expect(across).toEqual([]);
});
