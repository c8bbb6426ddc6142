/**
 * The fake runtime, which most unit tests build on, held to the runtime contract the process and
 * docker runtimes run, so it cannot drift from them. It runs no command: each case tells it what
 * its command lines do, and the cases on what a command itself does are left to the real runtimes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeRuntime } from "../fake-runtime.ts";
import { runtimeContract, type ScriptedExec } from "../runtime-contract.ts";

const volumeRoots: string[] = [];
const scriptedExecs = new WeakMap<FakeRuntime, Map<string, ScriptedExec>>();

runtimeContract(
  "fake",
  (clock) => {
    const runtime = new FakeRuntime(clock);
    runtime.volumeRoot = mkdtempSync(join(tmpdir(), "minikubelet-fake-contract-"));
    volumeRoots.push(runtime.volumeRoot);
    const execs = new Map<string, ScriptedExec>();
    scriptedExecs.set(runtime, execs);
    runtime.exec = (_container, command) => execs.get(command.join(" ")) ?? { exitCode: 127, output: `${command[0]}: not scripted\n` };
    return runtime;
  },
  {
    image: "none",
    cleanup: () => {
      for (const dir of volumeRoots.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
    scripted: {
      container: (runtime, name, behaviour) => runtime.behaviours.set(name, behaviour),
      exec: (runtime, command, result) => scriptedExecs.get(runtime)!.set(command.join(" "), result),
    },
  },
);
