/**
 * `logs --tail N` of a docker attempt: the engine keeps the output, and it is the engine that takes
 * the tail (its json-file reader seeks from the end), so the CLI never receives the whole log.
 */
import { expect, test } from "bun:test";
import { dockerLogReader } from "../../src/cli/logs/docker-log-reader.ts";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import type { EngineLogs } from "../../src/logs/attempt-logs.ts";
import type { LogOptions } from "../../src/runtime/runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

/** An engine holding `lines` lines of output for every container, that counts what it sends. */
function engine(lines: number) {
  const sent = { bytes: 0 };
  const runtime: EngineLogs = {
    async streamLogs(_id: string, options: LogOptions & { follow: boolean }, onText: (text: string) => unknown) {
      const from = options.tail === undefined ? 0 : Math.max(0, lines - options.tail);
      for (let i = from; i < lines; i++) {
        const text = `line ${i}\n`;
        sent.bytes += text.length;
        await onText(text);
      }
    },
  };
  return { runtime, sent };
}

test("logs --tail 2 of an attempt the engine keeps asks the engine for two lines, not the whole output", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const { runtime, sent } = engine(100_000);
  let out = "";
  await logsCommand("web-lab", { db: h.dbPath, tail: "2" }, { clock: h.clock, stdout: (text) => void (out += text), stderr: () => {}, readLogs: dockerLogReader(async () => runtime) });
  expect(out).toBe("line 99998\nline 99999\n");
  expect(sent.bytes).toBe(out.length);
  h.agent.close();
});
