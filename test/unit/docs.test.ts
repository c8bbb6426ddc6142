/**
 * The documentation against what it documents: each docs/commands page's help block is the command's
 * `--help` (produced in this process) and each output block the command's output; every relative
 * link in README.md, CONTRIBUTING.md and docs/ reaches a file, and an `#anchor` a heading of it by
 * GitHub's slug rules; the README stays a front door (short, with the two Quick start commands).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { commandNames, commandPages, expectedBlock, generatedBlocks, ROOT } from "../../scripts/docs-help.ts";

const README = join(ROOT, "README.md");

/** README.md, CONTRIBUTING.md and every .md under docs/. */
function markdownFiles(): string[] {
  const files = [README, join(ROOT, "CONTRIBUTING.md")];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".md")) files.push(path);
    }
  };
  walk(join(ROOT, "docs"));
  return files;
}

/** The text with fenced code blocks blanked (their lines kept, so line numbers stay true). */
function withoutFences(text: string): string {
  let fence: string | undefined;
  return text
    .split("\n")
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker) {
        fence = marker;
        return "";
      }
      if (fence !== undefined) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
        return "";
      }
      return line;
    })
    .join("\n");
}

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]*>/g, "");
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a file's headings, repeats numbered as GitHub numbers them (-1, -2 ...). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of withoutFences(readFileSync(file, "utf8")).split("\n")) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Every inline link and image outside code (fenced blocks and code spans). */
function links(file: string): Link[] {
  const text = withoutFences(readFileSync(file, "utf8")).replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, " "));
  const found: Link[] = [];
  for (const match of text.matchAll(/!?\[(?:[^\]]|\n)*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const line = text.slice(0, match.index).split("\n").length;
    found.push({ file, line, target: match[1]! });
  }
  return found;
}

function isRelative(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//");
}

describe("command pages", () => {
  const pages = commandPages();

  test("every command has a page, and every page is a command's", () => {
    expect(pages.map(([command]) => command).sort()).toEqual([...commandNames()].sort());
  });

  test.each(pages)("docs/commands/%s.md quotes the CLI as it prints today", (command, file) => {
    const blocks = generatedBlocks(readFileSync(file, "utf8"), command);
    expect(blocks.filter((block) => block.kind === "help")).toHaveLength(1);
    for (const block of blocks) {
      const what = block.kind === "help" ? `minikubelet ${command} --help` : `minikubelet ${block.args}`;
      try {
        expect(block.current).toBe(expectedBlock(block));
      } catch (error) {
        if (error instanceof Error) error.message = `docs/commands/${command}.md is not what \`${what}\` prints: run scripts/docs-help\n${error.message}`;
        throw error;
      }
    }
  });
});

describe("links", () => {
  const files = markdownFiles();
  const all = files.flatMap(links).filter((link) => isRelative(link.target));

  test("the pages link to one another", () => {
    expect(all.length).toBeGreaterThan(50);
  });

  test("every relative link reaches a file, and its #anchor a heading of that file", () => {
    const broken: string[] = [];
    for (const { file, line, target } of all) {
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const where = `${relative(ROOT, file)}:${line}: ${target}`;
      const destination = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(destination)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (!destination.endsWith(".md") || statSync(destination).isDirectory()) {
        broken.push(`${where}: an anchor into a file that is not markdown`);
        continue;
      }
      if (!anchors(destination).has(decodeURIComponent(anchor))) {
        broken.push(`${where}: no heading with that anchor in ${relative(ROOT, destination)} (${[...anchors(destination)].join(", ")})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("docs/README.md indexes every page under docs/", () => {
    const index = join(ROOT, "docs/README.md");
    const linked = new Set(links(index).map(({ target }) => resolve(dirname(index), target.split("#")[0]!)));
    const unlisted = files.filter((file) => file.startsWith(join(ROOT, "docs") + "/") && file !== index && !linked.has(file));
    expect(unlisted.map((file) => relative(ROOT, file))).toEqual([]);
  });

  test("GitHub's slugs, as the links above rely on them", () => {
    expect(githubSlug("State database")).toBe("state-database");
    expect(githubSlug("The kubelet's endpoints")).toBe("the-kubelets-endpoints");
    expect(githubSlug("Resource usage (kubectl top)")).toBe("resource-usage-kubectl-top");
    expect(githubSlug("kubectl attach and run -i")).toBe("kubectl-attach-and-run--i");
    expect(githubSlug("Join a cluster (node mode)")).toBe("join-a-cluster-node-mode");
    expect(githubSlug("`minikubelet run`")).toBe("minikubelet-run");
  });
});

describe("README.md", () => {
  const text = readFileSync(README, "utf8");

  test("stays short enough to skim", () => {
    expect(text.split("\n").length).toBeLessThan(200);
  });

  test("its Quick start gives the two commands a new user needs, in a code block", () => {
    const quickStart = text.split(/^## /m).find((section) => section.startsWith("Quick start"));
    expect(quickStart).toBeDefined();
    const code = [...quickStart!.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).join("");
    expect(code).toMatch(/^\.\/scripts\/demo\b/m);
    expect(code).toMatch(/^\.\/scripts\/test\b/m);
  });
});
