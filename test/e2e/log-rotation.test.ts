/**
 * Issue 14, with the compiled binary: `run --container-log-max-size 64Ki --container-log-max-files 3`
 * and a container that floods stdout at full speed. Its log stays under 64Ki x 3 on disk while it
 * writes, the rotated files are the kubelet's (log.TIMESTAMP, older ones gzipped), and
 * `logs --tail 5` shows the newest lines.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { runtimeRootOf } from "../../src/store/db-path.ts";
import { Agent, processContainers, processE2E, Workspace, waitFor } from "./helpers.ts";
import { compressionDone, logBytesOnDisk, logFiles } from "../log-files.ts";

const e2e = processE2E();
const LINES = 2_000_000;



test("a flooding container's log stays under max-size x max-files, and logs --tail shows the newest lines", async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write(
    "flood.yaml",
    `apiVersion: v1
kind: Pod
metadata: {name: flood}
spec:
  containers:
    - name: main
      image: none
      command: ["sh", "-c", "seq 1 ${LINES}; exec sleep 3600"]
`,
  );
  const agent = new Agent(ws, ["--container-log-max-size", "64Ki", "--container-log-max-files", "3"]);
  e2e.agents.push(agent);
  const container = await waitFor("the flood container", () => processContainers(ws).find((c) => c.name === "main" && c.pid !== undefined), 20_000);
  const dir = join(runtimeRootOf(ws.db), "process", "pods", container.podUid, "containers", container.id);
  let largest = 0;
  await waitFor(
    "the last line",
    () => {
      largest = Math.max(largest, logBytesOnDisk(dir));
      return ws.run("logs", "flood-n1", "--tail", "1").stdout === `${LINES}\n`;
    },
    60_000,
    () => ws.run("logs", "flood-n1", "--tail", "1").stdout,
  );
  // A gzip in flight adds its .gz beside the file it compresses, for that moment.
  expect(largest).toBeLessThanOrEqual(4 * 64 * 1024);
  await waitFor("the last gzip", () => compressionDone(dir) && logBytesOnDisk(dir) <= 3 * 64 * 1024, 5000);
  const names = logFiles(dir).sort();
  expect(names).toHaveLength(3);
  expect(names[0]).toMatch(/^container\.log$/);
  expect(names[1]).toMatch(/^container\.log\.\d{8}-\d{6}\.\d{9}\.gz$/);
  expect(names[2]).toMatch(/^container\.log\.\d{8}-\d{6}\.\d{9}$/);
  expect(ws.cli("logs", "flood-n1", "--tail", "5")).toBe(`${[4, 3, 2, 1, 0].map((back) => LINES - back).join("\n")}\n`);
}, 90_000);
