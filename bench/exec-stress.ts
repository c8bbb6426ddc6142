/**
 * Runs `kubectl exec` many times against the compiled agent (process runtime, one pod) and counts
 * the runs that fail or hang: the reproduction for SPDY exec (kubectl 1.27 to 1.29) hanging once in
 * a full test run, and for kubectl 1.30-1.33 losing a quick command's output over WebSocket. Each
 * run is bounded; a hung one is killed and counted. It also prints the agent's open file
 * descriptors before and a while after the runs: a session that is never closed shows there.
 *
 *   bun bench/exec-stress.ts [--runs 200] [--kubectl 1.28] [--mode plain|stdin|tty|shell] [--parallel 1] [--load 0]
 *
 * `--load N` keeps N busy loops running meanwhile (a loaded machine, as under the full suite).
 */
import { readdirSync } from "node:fs";
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
  if (values.mode === "shell") return shell(started);
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
  // No size check: a command this quick runs before kubectl's first resize, as on a real kubelet.
  return { ok: status === 0 && screen.includes("\r\n42\r\n"), detail: JSON.stringify({ status, screen }), ms: performance.now() - started };
}

/** Linux only: the agent's open file descriptors (sockets included). */
const openFds = () => readdirSync(`/proc/${agent.pid}/fd`).length;
const fdsBefore = openFds();
/** As test/kubectl/exec.test.ts's `-it` test: `sh` on a terminal, typed into once its prompt shows. */
async function shell(started: number): Promise<{ ok: boolean; detail: string; ms: number }> {
  let screen = "";
  let lastOutput = Date.now();
  const child = Bun.spawn([kubectl!, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "exec", "-it", POD, "--", "sh"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TERM: "xterm" },
    terminal: {
      cols: 100,
      rows: 30,
      data: (terminal, data) => {
        const text = new TextDecoder().decode(data);
        screen += text;
        lastOutput = Date.now();
        if (text.includes("\x1b[6n")) terminal.write("\x1b[1;5R");
      },
    },
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  while (!(/[#$] $/.test(screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")) && Date.now() - lastOutput > 300) && child.exitCode === null) await Bun.sleep(50);
  child.terminal?.write("stty size; echo $((6*7)); exit\r");
  const status = await child.exited;
  clearTimeout(timer);
  child.terminal?.close();
  return { ok: status === 0 && screen.includes("\r\n30 100\r\n42\r\n"), detail: JSON.stringify({ status, screen }), ms: performance.now() - started };
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
let fdsAfter = 0;
try {
  await Promise.all(Array.from({ length: parallel }, worker));
  // Past the 5 s a finished SPDY session gives its client to close the connection.
  await Bun.sleep(6000);
  fdsAfter = openFds();
} finally {
  for (const loop of busy) loop.kill("SIGKILL");
  session[Symbol.dispose]();
  await agent.terminate();
  ws.cleanup();
}
times.sort((a, b) => a - b);
console.log(`kubectl ${values.kubectl} exec (${values.mode}) x${runs}, ${parallel} at a time, load ${values.load}: ${failures} failed; median ${times[times.length >> 1]?.toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms; agent fds ${fdsBefore} before, ${fdsAfter} after`);
process.exit(failures === 0 ? 0 : 1);
