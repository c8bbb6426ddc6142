/**
 * The cost of container log rotation under a flood (issue 14): a container writes numbered lines
 * as fast as it can (`seq`) while the process runtime's monitor rotates its log, and a follower
 * (`logs -f`) reads it all. Prints the lines the follower lost or got twice (both must be zero),
 * the largest the log files grew on disk against max-size x max-files, the rate, and the agent's
 * own CPU, first with no reader, then with the follower (both run in this process; the copying
 * is the monitor's).
 * Figures only, no assertions.
 *
 *   node_modules/.bin/bun bench/log-rotation.ts [LINES] [MAX_SIZE] [MAX_FILES]   (default: 5000000 1Mi 3)
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../src/clock.ts";
import { writeAttemptLogs } from "../src/logs/attempt-logs.ts";
import { containerLogPolicy } from "../src/runtime/log-rotation-policy.ts";
import { ProcessRuntime } from "../src/runtime/process/process.ts";
import type { AttemptRow, StoreReader } from "../src/store/queries.ts";
import { contractContainer, contractPod } from "../test/runtime-contract.ts";

const lines = Number(process.argv[2] ?? 5_000_000);
const policy = containerLogPolicy({ maxSize: process.argv[3] ?? "1Mi", maxFiles: process.argv[4] ?? 3 });

function onDisk(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    if (name !== "log" && !name.startsWith("log.")) continue;
    try {
      total += statSync(join(dir, name)).size;
    } catch {
      // Removed between the listing and the stat.
    }
  }
  return total;
}

async function flood(follow: boolean): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "minikubelet-bench-"));
  const runtime = new ProcessRuntime({ rootDir: root, logPolicy: policy });
  try {
    const go = join(root, "go");
    const container = contractContainer("flood", ["sh", "-c", `while [ ! -e ${go} ]; do sleep 0.01; done; exec seq 1 ${lines}`]);
    const pod = contractPod("bench", [container]);
    const sandbox = await runtime.runPodSandbox(pod);
    const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
    const dir = join(root, "pods", pod.uid, "containers", id);
    const attempt: AttemptRow = { podUid: pod.uid, container: "flood", attempt: 0, runtimeId: id, startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath: join(dir, "log") };
    let exited = false;
    const store = { attempts: () => [exited ? { ...attempt, finishedAt: 1, exitCode: 0 } : attempt] } as unknown as StoreReader;

    // The follower counts newlines as it goes and checks the first whole line of every chunk against
    // the count: holding or parsing all of it would measure the bench, not the agent.
    let received = 0;
    let lost = 0;
    let repeated = 0;
    let bytes = 0;
    const onChunk = (chunk: Uint8Array) => {
      const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      bytes += buffer.length;
      const first = buffer.indexOf(10);
      const second = first < 0 ? -1 : buffer.indexOf(10, first + 1);
      if (second > 0) {
        const n = Number(buffer.subarray(first + 1, second).toString());
        const expected = received + 2;
        if (n > expected) lost += n - expected;
        if (n < expected) repeated += expected - n;
        received += n - expected;
      }
      for (let at = buffer.indexOf(10); at >= 0; at = buffer.indexOf(10, at + 1)) received++;
    };
    let opened!: () => void;
    const isOpen = new Promise<void>((resolve) => (opened = resolve));
    const following = follow ? writeAttemptLogs(attempt, { follow: true }, { store, clock: realClock, signal: new AbortController().signal, opened }, onChunk) : undefined;
    if (follow) await isOpen;

    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    writeFileSync(go, "");
    let largest = 0;
    while ((await runtime.containerStatus(id)).state !== "exited") {
      largest = Math.max(largest, onDisk(dir));
      await Bun.sleep(10);
    }
    exited = true;
    await following;
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    if (follow) lost += lines - received;

    const cap = policy.maxBytes * policy.maxFiles;
    const written = follow ? bytes : 0;
    console.log(follow ? "with a follower (logs -f):" : "no reader:");
    console.log(`  flood: ${lines} lines in ${seconds.toFixed(2)} s${follow ? `, ${(written / 2 ** 20).toFixed(1)} MiB (${(written / 2 ** 20 / seconds).toFixed(1)} MiB/s), ${Math.floor(written / policy.maxBytes)} rotations` : ""}`);
    if (follow) console.log(`  lines lost by the follower: ${lost}; lines read twice: ${repeated}`);
    console.log(`  largest on disk: ${(largest / 1024).toFixed(0)} KiB (cap: max-size ${policy.maxBytes / 1024} KiB x ${policy.maxFiles} files = ${(cap / 1024).toFixed(0)} KiB)`);
    console.log(`  agent CPU while flooding: ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s over ${seconds.toFixed(2)} s (${(((cpu.user + cpu.system) / 1e6 / seconds) * 100).toFixed(0)}% of a core)${follow ? ", the follower's reading included" : ""}`);
    await runtime.removeContainer(id);
  } finally {
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await flood(false);
await flood(true);
