/**
 * Runs `kubectl exec` many times against the compiled agent (process runtime, one busybox-free
 * `sh` pod) and counts the runs that fail or hang: the reproduction for SPDY exec (kubectl 1.27 to
 * 1.29) hanging once in a full test run. Each run is bounded; a hung one is killed and counted.
 *
 *   bun bench/exec-spdy-stress.ts [--runs 200] [--kubectl 1.28] [--mode plain|stdin|tty] [--parallel 1] [--load 0]
 *
 * `--load N` keeps N busy loops running meanwhile (a loaded machine, as under the full suite).
 */
import { parseArgs } from "node:util";
import { Agent, ensureBinary, Workspace } from "../test/e2e/helpers.ts";
import { KUBECTL, KubectlSession } from "../test/kubectl/harness.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    kubectl: { type: "string", default: "1.28" },
    mode: { type: "string", default: "plain" },
    parallel: { type: "string", default: "1" },
    load: { type: "string", default: "0" },
    timeout: { type: "string", default: "15000" },
    verbose: { type: "string", default: "0" },
  },
});
const runs = Number(values.runs);
const parallel = Number(values.parallel);
const timeoutMs = Number(values.timeout);
const kubectl = KUBECTL.versions[values.kubectl as keyof typeof KUBECTL.versions];
if (!kubectl) throw new Error(`no kubectl ${values.kubectl}`);

const POD = "shell-stress";
ensureBinary();
const ws = new Workspace();
ws.write("shell.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: shell}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - {name: main, image: busybox, command: [sh, -c, 'sleep 3600']}\n`);
const agent = new Agent(ws, ["--runtime", "process", "--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node: "stress" });
await agent.waitForOutput(`Started default/${POD} main`, 60_000);
const session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
const busy = Array.from({ length: Number(values.load) }, () => Bun.spawn(["sh", "-c", "while :; do :; done"]));

async function once(): Promise<{ ok: boolean; detail: string; ms: number }> {
  const started = performance.now();
  if (values.mode === "tty") return tty(started);
  const stdin = values.mode === "stdin" ? "data\n" : undefined;
  const args = values.mode === "stdin" ? ["exec", "-i", POD, "--", "sh", "-c", "cat; echo done"] : ["exec", POD, "--", "echo", "hi"];
  const result = await session.run(kubectl!, [`-v=${values.verbose}`, ...args], { timeoutMs, stdin });
  const expected = values.mode === "stdin" ? "data\ndone\n" : "hi\n";
  const ms = performance.now() - started;
  return { ok: result.status === 0 && result.stdout === expected, detail: JSON.stringify(result), ms };
}

async function tty(started: number): Promise<{ ok: boolean; detail: string; ms: number }> {
  let screen = "";
  const child = Bun.spawn([kubectl!, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "exec", "-it", POD, "--", "sh", "-c", "stty size; echo $((6*7))"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TERM: "xterm" },
    terminal: { cols: 100, rows: 30, data: (_terminal, data) => (screen += new TextDecoder().decode(data)) },
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const status = await child.exited;
  clearTimeout(timer);
  child.terminal?.close();
  return { ok: status === 0 && screen.includes("30 100\r\n42\r\n"), detail: JSON.stringify({ status, screen }), ms: performance.now() - started };
}

let failures = 0;
const times: number[] = [];
let next = 0;
async function worker(): Promise<void> {
  while (next < runs) {
    const index = next++;
    const { ok, detail, ms } = await once();
    times.push(ms);
    if (!ok) {
      failures++;
      console.log(`run ${index}: FAILED after ${ms.toFixed(0)} ms: ${detail}`);
    }
  }
}
try {
  await Promise.all(Array.from({ length: parallel }, worker));
} finally {
  for (const loop of busy) loop.kill("SIGKILL");
  session[Symbol.dispose]();
  await agent.terminate();
  ws.cleanup();
}
times.sort((a, b) => a - b);
console.log(`kubectl ${values.kubectl} exec (${values.mode}) x${runs}, ${parallel} at a time, load ${values.load}: ${failures} failed; median ${times[times.length >> 1]?.toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms`);
process.exit(failures === 0 ? 0 : 1);
