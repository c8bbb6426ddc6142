/**
 * Start-up of the compiled binary, whole process from spawn to exit: `--version`, and `get pods -A`
 * and `describe pod` on a small database (5 pods), each next to the floor measured in the same run,
 * a compiled Bun hello-world (console.log), run in turn with them. Figures only.
 *   bun bench/cli-startup.ts [RUNS]
 * Uses ./minikubelet when it is newer than what it embeds (else runs scripts/build first).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeHarness } from "../test/store-fixtures.ts";
import { container, desired, pod } from "../test/pod-builder.ts";
import { BINARY, ensureBinary } from "../test/e2e/helpers.ts";
import { buildFloor } from "./cli-timing.ts";

const runs = Number(process.argv[2] ?? 30);
const dir = mkdtempSync(join(tmpdir(), "mk-bench-cli-"));


ensureBinary();
// The floor: a compiled Bun program printing one line, built as minikubelet is.
const floorBinary = buildFloor(dir);

const h = storeHarness(dir);
await h.kubelet.sync(desired(...Array.from({ length: 5 }, (_, i) => pod({ name: `p${i}`, containers: [container("app")] }))));
await h.advance(5);
h.kubelet.stop();
h.agent.close();

/** Wall time of one whole process, output read and dropped; throws when it fails. */
function once(command: string[]): number {
  const started = performance.now();
  const result = Bun.spawnSync(command, { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, TZ: "UTC", NO_COLOR: "1" } });
  const ms = performance.now() - started;
  if (result.exitCode !== 0) throw new Error(`${command.join(" ")} exited ${result.exitCode}: ${result.stderr.toString()}`);
  return ms;
}

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
const floor = [floorBinary, "hello"];
const figures: [string, string[]][] = [
  ["--version", [BINARY, "--version"]],
  ["get pods -A", [BINARY, "get", "pods", "-A", "--db", h.dbPath]],
  ["describe pod p0-lab -n demo", [BINARY, "describe", "pod", "p0-lab", "-n", "demo", "--db", h.dbPath]],
];

console.log(`${runs} runs each after 2 warm-ups, in turn with the floor (a compiled Bun hello-world); wall ms of the whole process`);
console.log(`${"".padEnd(30)}${"min".padStart(8)}${"median".padStart(9)}   floor min / median   median ratio`);
for (const [label, command] of figures) {
  const samples: number[] = [];
  const floorSamples: number[] = [];
  for (let round = 0; round < runs + 2; round++) {
    const [ms, floorMs] = [once(command), once(floor)];
    if (round >= 2) (samples.push(ms), floorSamples.push(floorMs));
  }
  const ratio = median(samples) / median(floorSamples);
  console.log(
    `${label.padEnd(30)}${Math.min(...samples).toFixed(1).padStart(8)}${median(samples).toFixed(1).padStart(9)}   ${Math.min(...floorSamples).toFixed(1).padStart(5)} / ${median(floorSamples).toFixed(1).padEnd(9)}   ${ratio.toFixed(1)}x`,
  );
}
rmSync(dir, { recursive: true, force: true });
