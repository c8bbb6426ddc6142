/**
 * Keeps what docs/commands/*.md quote from the CLI equal to what the CLI prints. A page holds, between
 * marker comments, fenced blocks that this script writes and the prose around them that it leaves
 * alone:
 *
 *   <!-- help:begin -->                            `minikubelet COMMAND --help`, COMMAND the page's name
 *   <!-- help:end -->
 *   <!-- output:begin backoff --backoff-base 1 --> the output of `minikubelet backoff --backoff-base 1`,
 *   <!-- output:end -->                            run from the repository's root (deterministic commands only)
 *
 * Trailing spaces are cut from each line (cac pads its option lines), so an editor that trims them
 * leaves a page current.
 *
 *   scripts/docs-help           rewrites the pages' blocks
 *   scripts/docs-help --check   rewrites nothing; exits 1 naming each page that differs
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createCLI } from "../src/cli/cli.ts";

export const ROOT = resolve(import.meta.dir, "..");
export const COMMAND_PAGES = join(ROOT, "docs/commands");

/** The subcommands the CLI declares, in its order. */
export function commandNames(): string[] {
  return createCLI().commands.map((command) => command.name);
}

/** What `minikubelet COMMAND --help` prints, produced in this process (cac writes help with console.log). */
export function helpText(command: string): string {
  const cli = createCLI();
  const printed: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => void printed.push(parts.map(String).join(" "));
  try {
    cli.parse(["minikubelet", "minikubelet", command, "--help"], { run: false });
  } finally {
    console.log = log;
  }
  if (printed.length === 0) throw new Error(`minikubelet ${command} --help printed nothing: is "${command}" a command?`);
  return tidy(printed.join("\n"));
}

/** stdout of `minikubelet ARGS` (from source, NO_COLOR=1, in the repository's root), with the typed command as its first line. */
export function commandOutput(args: string): string {
  const run = spawnSync(process.execPath, ["src/main.ts", ...args.split(/\s+/)], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`minikubelet ${args} exited ${run.status}: ${run.stderr}`);
  return tidy(`$ minikubelet ${args}\n${run.stdout}`);
}

function tidy(text: string): string {
  return text
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .trim();
}

/** One generated block of a page: its marker's kind and argument, and the text between the markers. */
export interface GeneratedBlock {
  kind: "help" | "output";
  /** help: the command (the page's name); output: the arguments after `minikubelet`. */
  args: string;
  /** What is between the markers now. */
  current: string;
}

const BLOCK = /(<!-- (help|output):begin ?([^>]*?) ?-->\n)([\s\S]*?)(<!-- \2:end -->)/g;

/** The generated blocks of a page; `command` is the page's name (`install-unit` for install-unit.md). */
export function generatedBlocks(page: string, command: string): GeneratedBlock[] {
  return [...page.matchAll(BLOCK)].map((match) => ({
    kind: match[2] as "help" | "output",
    args: match[2] === "help" ? command : match[3]!,
    current: match[4]!,
  }));
}

/** What a block should hold: its text in a fenced block, with the newline before the end marker. */
export function expectedBlock(block: Pick<GeneratedBlock, "kind" | "args">): string {
  const text = block.kind === "help" ? helpText(block.args) : commandOutput(block.args);
  return `\`\`\`text\n${text}\n\`\`\`\n`;
}

/** The page with every generated block rewritten; the prose around them is kept byte for byte. */
export function regeneratePage(page: string, command: string): string {
  return page.replace(BLOCK, (_all, begin: string, kind: "help" | "output", args: string, _current, end: string) => {
    return `${begin}${expectedBlock({ kind, args: kind === "help" ? command : args })}${end}`;
  });
}

/** docs/commands/*.md as [command, file] pairs. */
export function commandPages(): [string, string][] {
  return readdirSync(COMMAND_PAGES)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => [name.slice(0, -".md".length), join(COMMAND_PAGES, name)]);
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const [command, file] of commandPages()) {
    const before = readFileSync(file, "utf8");
    const after = regeneratePage(before, command);
    if (after === before) continue;
    stale++;
    if (check) console.error(`docs/commands/${command}.md differs from the CLI: run scripts/docs-help`);
    else {
      writeFileSync(file, after);
      console.error(`rewrote docs/commands/${command}.md`);
    }
  }
  process.exitCode = check && stale > 0 ? 1 : 0;
}
