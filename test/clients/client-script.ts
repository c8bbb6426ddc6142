/**
 * What the client-library tests share: Debian's python3-kubernetes (skipped without it, a failure
 * under CI=true) and the scripts' report, one JSON line per step, read back by step name.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describeNeeding } from "../requirements.ts";

/** Debian's interpreter: the one its python3-kubernetes package installs for (not a pyenv shim on PATH). */
export const PYTHON = "/usr/bin/python3";
const hasPythonLibrary = existsSync(PYTHON) && spawnSync(PYTHON, ["-c", "import kubernetes"]).status === 0;

/** One step a script reported: its facts, or the error that ended it. */
export interface Step {
  step: string;
  error?: unknown;
  [fact: string]: unknown;
}

export function describeWithPythonClient(name: string, body: () => void): void {
  describeNeeding(name, hasPythonLibrary ? undefined : `${PYTHON} cannot import kubernetes (Debian's python3-kubernetes)`, body);
}

/** Runs a client script to its end (killed after `boundMs`); its steps by name. */
export async function runClientScript(command: string[], boundMs = 90_000): Promise<Map<string, Step>> {
  const run = Bun.spawn(command, { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => run.kill(), boundMs);
  const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  clearTimeout(timer);
  const steps = new Map(out.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Step).map((step) => [step.step, step]));
  if (steps.size === 0) throw new Error(`${command.join(" ")} printed nothing; stderr:\n${err}`);
  return steps;
}

/** The step `name` as reported; a missing or failed step fails the test with what went wrong. */
export function stepOf(steps: Map<string, Step>, name: string): Step {
  const found = steps.get(name);
  if (!found) throw new Error(`no "${name}" step reported`);
  if (found.error) throw new Error(`${name} failed: ${JSON.stringify(found.error)}`);
  return found;
}
