/**
 * Memory of the process runtime's monitor (issue 7: keep it near a shell's 1-2 MB): starts
 * containers running `sleep 300`, reads each monitor's /proc/<pid>/smaps_rollup and prints RSS and
 * PSS. PSS divides shared pages among their users, so it falls as more monitors run: it is the
 * figure that adds up to what a thousand pods cost. Figures only, no assertions.
 *
 *   node_modules/.bin/bun bench/monitor-memory.ts [COUNT ...]    (default: 1 20)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../src/runtime/process/process.ts";
import { readPid } from "../src/runtime/process/process-files.ts";
import { contractContainer, contractPod } from "../test/runtime-contract.ts";

function rollup(pid: number): { rss: number; pss: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN);
  return { rss: kb("Rss"), pss: kb("Pss") };
}

async function measure(count: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "minikubelet-bench-"));
  const runtime = new ProcessRuntime({ rootDir: root });
  const container = contractContainer("sleeper", ["sleep", "300"]);
  const pod = contractPod("bench", [container]);
  const sandbox = await runtime.runPodSandbox(pod);
  try {
    const ids: string[] = [];
    for (let attempt = 0; attempt < count; attempt++) {
      ids.push(await runtime.startContainer({ pod, container, kind: "app", attempt, sandbox }));
    }
    const figures = ids.map((id) => {
      const pid = readPid(join(root, "pods", pod.uid, "containers", id));
      if (!pid) throw new Error(`container ${id}: no pid file`);
      return { monitor: rollup(pid.monitorPid), container: rollup(pid.pid) };
    });
    const avg = (pick: (f: (typeof figures)[number]) => number) =>
      (figures.reduce((sum, f) => sum + pick(f), 0) / figures.length / 1024).toFixed(2);
    console.log(
      `${String(count).padStart(4)} monitors: monitor RSS ${avg((f) => f.monitor.rss)} MB, PSS ${avg((f) => f.monitor.pss)} MB` +
        ` | container (sleep) RSS ${avg((f) => f.container.rss)} MB, PSS ${avg((f) => f.container.pss)} MB  (averages)`,
    );
  } finally {
    await runtime.removePodSandbox(sandbox.id);
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const counts = process.argv.slice(2).map(Number);
for (const count of counts.length > 0 ? counts : [1, 20]) await measure(count);
