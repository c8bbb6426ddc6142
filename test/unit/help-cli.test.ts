/** Every subcommand's --help: its one-line description first, and examples that parse. */
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { createCLI, runCLI } from "../../src/cli/cli.ts";

let printed: string;
let spies: ReturnType<typeof spyOn>[];

beforeEach(() => {
  printed = "";
  const capture = (...args: unknown[]) => void (printed += `${args.join(" ")}\n`);
  spies = [
    spyOn(console, "log").mockImplementation(capture),
    spyOn(process.stdout, "write").mockImplementation(((chunk: unknown) => ((printed += String(chunk)), true)) as never),
    spyOn(process.stderr, "write").mockImplementation(((chunk: unknown) => ((printed += String(chunk)), true)) as never),
  ];
});

afterEach(() => {
  for (const spy of spies) spy.mockRestore();
});

/** Words of an example line as a shell would split them (double quotes only). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]!);
}

const commands = createCLI().commands.map((command) => [command.name, command.description] as const);

test("the walk covers every command", () => {
  expect(commands.map(([name]) => name)).toEqual(expect.arrayContaining(["run", "validate", "backoff", "get", "describe", "events", "logs", "sql", "kubeconfig", "serve"]));
});

describe.each(commands)("minikubelet %s --help", (name, description) => {
  test("starts with the command's one-line description and ends with examples", async () => {
    expect(await runCLI([name, "--help"])).toBe(0);
    const [first, ...rest] = printed.split("\n");
    expect(description).not.toContain("\n");
    expect(first).toBe(`minikubelet ${name}: ${description}`);
    const examples = rest.slice(rest.indexOf("Examples:") + 1).filter((line) => line !== "");
    expect(rest).toContain("Examples:");
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) expect(example).toStartWith(`  $ minikubelet ${name} `);
  });

  test("every example parses: known options, required arguments, values where needed", async () => {
    await runCLI([name, "--help"]);
    const examples = printed.split("\n").filter((line) => line.startsWith("  $ minikubelet "));
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const cli = createCLI();
      cli.parse(["bun", ...words(example.slice("  $ ".length))], { run: false });
      expect(cli.matchedCommandName).toBe(name);
      const command = cli.matchedCommand!;
      expect(() => (command.checkUnknownOptions(), command.checkRequiredArgs(), command.checkOptionValue())).not.toThrow();
    }
  });
});
