#!/usr/bin/env bun
/**
 * The entry. `--version` alone is answered here, before the command line's parser (cac, and the
 * node:events it loads) is: that load is most of what such a run would cost. Every other argv goes
 * to runCLI, which prints the same line for `--version` among other flags.
 */
import { writeStdout } from "./cli/stdio.ts";
import { versionLine } from "./version.ts";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) writeStdout(`${versionLine()}\n`);
else process.exitCode = await (await import("./cli/cli.ts")).runCLI(argv);
