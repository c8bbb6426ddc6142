/**
 * `logs --tail 2` of a container that has written a few GB (issue 15), as the compiled binary, on
 * both runtimes, next to floors measured in the same run: `tail -n 2` of the same file (process
 * runtime), `docker logs --tail 2` of the same container (docker: the engine reads its json-file
 * backwards), and a compiled Bun hello-world (start-up). Also the API's pods/log?tailLines=2 in
 * process, over the same reader. Figures only, no assertions. The docker part is skipped when no
 * engine answers.
 *
 *   node_modules/.bin/bun bench/logs-tail.ts [GB] [ROUNDS]   (default: 3 3)
 */
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary } from "../test/e2e/helpers.ts";
import { getLog, logsApi } from "../test/logs-api-fixtures.ts";
import { container, desired, pod } from "../test/pod-builder.ts";
import { storeHarness } from "../test/store-fixtures.ts";
import { buildFloor, medianRun, printRow } from "./cli-timing.ts";

const gigabytes = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 3);
const BUSYBOX = "minikubelet-test/busybox:1";

/** Writes `bytes` of numbered-looking lines, then two last lines to look for. */
function writeBigLog(path: string, bytes: number): void {
  const line = "2026-01-01 12:00:00 INFO the container says something of ordinary length, line after line\n";
  const block = Buffer.from(line.repeat(Math.floor((1 << 20) / line.length)));
  const fd = openSync(path, "w");
  try {
    for (let written = 0; written < bytes; written += block.length) writeSync(fd, block);
    writeSync(fd, "next to last\nlast line\n");
  } finally {
    closeSync(fd);
  }
}

/** A database whose pod `big-lab` ran one attempt, its output where `logPath` says (or in the engine). */
async function dbWithAttempt(dir: string, logDir: string): Promise<{ dbPath: string; podUid: string }> {
  const h = storeHarness(dir, { logPathOf: (_uid, id) => join(logDir, id) });
  await h.kubelet.sync(desired(pod({ name: "big", containers: [container("big")] })));
  await h.advance(0.5);
  h.kubelet.stop();
  h.agent.close();
  const db = new Database(h.dbPath);
  const { pod_uid: podUid } = db.query("SELECT pod_uid FROM attempts").get() as { pod_uid: string };
  db.close();
  return { dbPath: h.dbPath, podUid };
}

const dir = mkdtempSync(join(tmpdir(), "mk-bench-logs-"));
let dockerId: string | undefined;
try {
  const binary = ensureBinary();
  const hello = await medianRun([buildFloor(dir), "hello"], rounds);
  console.log(`a ${gigabytes} GB log; medians of ${rounds} runs; a shared, loaded machine`);

  const logDir = join(dir, "logs");
  mkdirSync(logDir);
  const processDb = await dbWithAttempt(join(dir, "process"), logDir);
  const database = new Database(processDb.dbPath);
  const { log_path: logPath } = database.query("SELECT log_path FROM attempts").get() as { log_path: string };
  database.close();
  writeBigLog(logPath, gigabytes * 1e9);
  const tailFloor = await medianRun(["tail", "-n", "2", logPath], rounds);
  printRow("process: logs --tail 2", await medianRun([binary, "logs", "big-lab", "--tail", "2", "--db", processDb.dbPath], rounds), "tail -n 2", tailFloor);
  printRow("process: tail -n 2 (the floor)", tailFloor, "hello", hello);
  {
    using api = logsApi(processDb.dbPath, (await import("../src/clock.ts")).realClock);
    const samples: number[] = [];
    for (let i = 0; i < rounds + 1; i++) {
      const start = performance.now();
      await (await getLog(api, "/api/v1/namespaces/demo/pods/big-lab/log?tailLines=2")).text();
      samples.push(performance.now() - start);
    }
    samples.shift();
    console.log(`process: API pods/log?tailLines=2, in process: ${samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!.toFixed(1)} ms`);
  }
  rmSync(logPath);

  const engine = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" });
  if (engine.status !== 0) {
    console.log("docker: skipped, no engine answers");
  } else {
    // json-file without a size cap, so the engine holds the whole output in one file, as a container
    // run with a large --container-log-max-size would.
    const script = `yes "2026-01-01 12:00:00 INFO the container says something of ordinary length, line after line" | head -c ${gigabytes * 1e9}; echo next to last; echo last line`;
    const created = spawnSync("docker", ["run", "-d", "--log-driver", "json-file", BUSYBOX, "sh", "-c", script], { encoding: "utf8" });
    if (created.status !== 0) throw new Error(`docker run failed: ${created.stderr}`);
    dockerId = created.stdout.trim();
    const writing = performance.now();
    spawnSync("docker", ["wait", dockerId]);
    console.log(`docker: the container wrote its output in ${((performance.now() - writing) / 1000).toFixed(0)} s`);
    const dockerDb = await dbWithAttempt(join(dir, "docker"), logDir);
    const db = new Database(dockerDb.dbPath);
    // The attempt as the docker runtime records it: the engine's id, no log file.
    db.run("UPDATE attempts SET runtime_id = ?, log_path = NULL", [dockerId]);
    db.close();
    const engineFloor = await medianRun(["docker", "logs", "--tail", "2", dockerId], rounds);
    printRow("docker: logs --tail 2", await medianRun([binary, "logs", "big-lab", "--tail", "2", "--db", dockerDb.dbPath], rounds), "docker logs --tail 2", engineFloor);
    printRow("docker: docker logs --tail 2 (floor)", engineFloor, "hello", hello);
  }
} finally {
  if (dockerId) spawnSync("docker", ["rm", "-f", dockerId]);
  rmSync(dir, { recursive: true, force: true });
}
