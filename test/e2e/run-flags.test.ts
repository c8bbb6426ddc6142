/**
 * `run` refuses a bad flag before it starts anything: no lock, no database, no runtime root, and
 * no agent left running with nothing to do (a bad --node used to read no pods, forever).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ENV, Workspace, ensureBinary } from "./helpers.ts";

let ws: Workspace;
beforeAll(() => {
  ensureBinary();
  ws = new Workspace();
});
afterAll(() => ws.cleanup());

function run(...flags: string[]) {
  // A run that starts would not exit by itself: the timeout turns that into a failure, not a hang.
  return spawnSync(BINARY, ["run", "--manifests", ws.manifests, "--db", ws.db, ...flags], { env: ENV, encoding: "utf8", timeout: 10_000 });
}

test.each([
  [["--node", "Lab_1"], "error: --node: "],
  [["--backoff-base", "30", "--backoff-max", "20"], "error: --backoff-base (30s) must not be above --backoff-max (20s)\n"],
  [["--api-listen", "6443"], 'error: --api-listen must be HOST:PORT or off (got "6443")\n'],
  [["--kubelet-listen", "10250"], 'error: --kubelet-listen must be HOST:PORT or off (got "10250")\n'],
  [["--kubelet-listen", "[lab]:10250"], "error: --kubelet-listen: lab in brackets is not an IPv6 address\n"],
  [["--container-log-max-files", "1"], "error: --container-log-max-files must be a whole number of at least 2 (got 1)\n"],
  [["--pod-max-pids", "0"], "error: --pod-max-pids must be a whole number above 0, or -1 for no limit (got 0)\n"],
  [["--container-log-max-size", "10MB"], 'error: --container-log-max-size must be a positive size such as 10Mi, 512Ki or 1G (got "10MB")\n'],
  [["--tls-cert-file", "node.crt", "--tls-private-key-file", "node.key"], "error: --tls-cert-file serves the kubelet port in node mode: give --kubeconfig too\n"],
  [["--client-ca-file", "ca.crt"], "error: --client-ca-file serves the kubelet port in node mode: give --kubeconfig too\n"],
])("run %p is a usage error before anything starts", (flags, message) => {
  const result = run(...flags);
  expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 2, stdout: "" });
  expect(result.stderr).toStartWith(message);
  expect(result.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  expect(existsSync(ws.db)).toBe(false);
  expect(existsSync(`${ws.db}.api`)).toBe(false);
  expect(existsSync(join(ws.path, "process"))).toBe(false);
});
