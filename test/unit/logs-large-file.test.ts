/**
 * A log file of several GB: `minikubelet logs --tail` and pods/log?tailLines read its end, never the
 * whole file (which would not fit a string, or memory).
 */
import { expect, test } from "bun:test";
import { appendFileSync, mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { getLog, logsApi } from "../logs-api-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const HUGE = 5 * 1024 ** 3;

test("the tail of a 5 GB log file is read from its end, by the CLI and the API", async () => {
  using dir = tempDir();
  const logDir = join(dir.path, "logs");
  mkdirSync(logDir);
  const h = storeHarness(dir.path, { logPathOf: (_uid, id) => join(logDir, id) });
  const start = h.runtime.startContainer.bind(h.runtime);
  h.runtime.startContainer = async (config) => {
    const id = await start(config);
    // Sparse: 5 GB of NULs on disk costs nothing, reading them all costs a lot.
    const file = join(logDir, id);
    writeFileSync(file, "first line\n");
    truncateSync(file, HUGE);
    appendFileSync(file, "\nnext to last\nlast line\n");
    return id;
  };
  await h.kubelet.sync(desired(pod({ name: "big", containers: [container("big")] })));
  await h.advance(0.5);
  let out = "";
  await logsCommand("big-lab", { db: h.dbPath, tail: "2" }, { stdout: (t) => (out += t), stderr: () => {} });
  expect(out).toBe("next to last\nlast line\n");
  using api = logsApi(h.dbPath, h.clock);
  expect(await (await getLog(api, "/api/v1/namespaces/demo/pods/big-lab/log?tailLines=1")).text()).toBe("last line\n");
  expect(await (await getLog(api, "/api/v1/namespaces/demo/pods/big-lab/log?limitBytes=5")).text()).toBe("first");
  h.agent.close();
});
