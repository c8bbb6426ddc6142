/**
 * The docker runtime against raw dockerode, in the same run, rounds interleaved (issue 15):
 *
 * - pod start: a manifest renamed into the agent's directory -> the container's first instruction,
 *   against creating and starting the same pause container and container (the same create options,
 *   from docker-container-config.ts) straight with dockerode. "First instruction" is the same on
 *   both sides: the container's shell truncates a file in a bind-mounted host directory before
 *   anything else, and this script sees the file appear through inotify (fs.watch). The agent's
 *   figure is also split at the engine's `create` event of the pause container, so the part spent
 *   noticing the file (the manifest watcher) shows apart from the part spent talking to the engine.
 * - exit: `kill` of the container -> the engine's `die` event seen by a plain event subscriber,
 *   and -> the agent's `Exited` line on its stdout (printed after the exit is committed).
 *
 * Prints medians and the ratio; asserts nothing. The engine and the 2 cores are shared, so run it
 * a few times.   bun bench/docker-pod.ts [ROUNDS]   (builds ./minikubelet first if it is stale)
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, renameSync, rmSync, watch, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Dockerode from "dockerode";
import { containerCreateOptions, sandboxCreateOptions } from "../src/runtime/docker/docker-container-config.ts";
import { useFetchTransport } from "../src/runtime/docker/docker-transport.ts";
import { LABEL, sandboxName } from "../src/runtime/labels.ts";
import { container, pod } from "../test/pod-builder.ts";
import { BINARY, ensureBinary } from "../test/e2e/helpers.ts";

const ROUNDS = Number(process.argv[2] ?? 20);
const IMAGE = "127.0.0.1:5000/minikubelet-test/busybox:1";
const SUFFIX = randomBytes(3).toString("hex");
const NS = `bench-${SUFFIX}`;
const NODE = "bench";
/** The first instruction: a shell builtin redirection (no fork), then something to kill. */
const COMMAND = ["sh", "-c", ": > /out/started; exec sleep 3600"];

/** The floor: dockerode as anyone would use it. */
const raw = new Dockerode();
/** The observer (events, cleanup), the same for both sides. */
const observer = useFetchTransport(new Dockerode());

const work = mkdtempSync(join(tmpdir(), "mk-docker-bench-"));
const manifests = join(work, "manifests");
mkdirSync(manifests);

// --- engine events, timestamped on arrival -------------------------------------------------------
const seen = new Map<string, number>(); // `${action} ${containerName}` -> performance.now()
const waiters = new Map<string, () => void>();
const events = await observer.getEvents({ filters: { type: ["container"], event: ["create", "die"], label: [`${LABEL.podNamespace}=${NS}`] } });
let pending = "";
events.on("data", (chunk: Buffer) => {
  const at = performance.now();
  pending += chunk.toString();
  let newline: number;
  while ((newline = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (!line.trim()) continue;
    const event = JSON.parse(line) as { Action: string; Actor: { Attributes: Record<string, string> } };
    const key = `${event.Action} ${event.Actor.Attributes.name}`;
    seen.set(key, at);
    waiters.get(key)?.();
  }
});
function eventAt(key: string): Promise<number> {
  const at = seen.get(key);
  if (at !== undefined) return Promise.resolve(at);
  return withTimeout(key, new Promise((done) => waiters.set(key, () => done(seen.get(key)!))));
}

// --- the agent -------------------------------------------------------------------------------------
ensureBinary();
const agent = spawn(BINARY, ["run", "--manifests", manifests, "--node", NODE, "--db", join(work, "state.db"), "--api-listen", "off", "--runtime", "docker"], {
  env: { ...process.env, TZ: "UTC", NO_COLOR: "1" },
  stdio: ["ignore", "pipe", "pipe"],
});
const lineWaiters: { match: (line: string) => boolean; done: (at: number) => void }[] = [];
let agentText = "";
agent.stdout!.on("data", (chunk: Buffer) => {
  const at = performance.now();
  const lines = (agentText + chunk.toString()).split("\n");
  agentText = lines.pop()!;
  for (const line of lines) {
    for (const waiter of [...lineWaiters]) {
      if (!waiter.match(line)) continue;
      lineWaiters.splice(lineWaiters.indexOf(waiter), 1);
      waiter.done(at);
    }
  }
});
agent.stderr!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
function agentLine(match: (line: string) => boolean, what: string): Promise<number> {
  return withTimeout(what, new Promise((done) => lineWaiters.push({ match, done })));
}

function withTimeout<T>(what: string, promise: Promise<T>, ms = 20_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Resolves with the time the container's first instruction created `dir`/started. */
function firstInstruction(dir: string): { at: Promise<number>; close: () => void } {
  let close = () => {};
  const at = new Promise<number>((done) => {
    const watcher = watch(dir, (_, file) => {
      if (file === "started") done(performance.now());
    });
    close = () => watcher.close();
  });
  return { at: withTimeout(`${dir}/started`, at), close };
}

function manifest(name: string, outDir: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: {
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      volumes: [{ name: "out", hostPath: { path: outDir, type: "Directory" } }],
      containers: [{ name: "c", image: IMAGE, imagePullPolicy: "IfNotPresent", command: COMMAND, volumeMounts: [{ name: "out", mountPath: "/out" }] }],
    },
  });
}

interface Round {
  start: number;
  /** Rename (or the first create call) -> the pause container's `create` event. */
  toCreate: number;
  /** Pause container's `create` event -> first instruction: the engine-facing part of a start. */
  startFromCreate: number;
  toDie: number;
  /** kill -> the engine's answer to the kill call. */
  toKillReturned: number;
  toRecorded?: number;
}

async function agentRound(i: number): Promise<Round> {
  const name = `a${i}`;
  const outDir = join(work, `out-${name}`);
  mkdirSync(outDir);
  const seenStart = firstInstruction(outDir);
  const staged = join(work, `${name}.json`);
  writeFileSync(staged, manifest(name, outDir));
  const before = performance.now();
  renameSync(staged, join(manifests, `${name}.json`));
  const started = await seenStart.at;
  seenStart.close();
  const fullName = `${name}-${NODE}`;
  const [sandbox] = await observer.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`, `${LABEL.podName}=${fullName}`, `${LABEL.sandbox}=true`] } });
  const [app] = await observer.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`, `${LABEL.podName}=${fullName}`, `${LABEL.sandbox}=false`] } });
  const pauseCreated = await eventAt(`create ${sandbox!.Names[0]!.slice(1)}`);
  const appName = app!.Names[0]!.slice(1);
  const recorded = agentLine((line) => line.includes(`Exited ${NS}/${fullName} c:`), `${fullName} Exited line`);
  const killedAt = performance.now();
  await raw.getContainer(app!.Id).kill();
  const killReturned = performance.now();
  const died = await eventAt(`die ${appName}`);
  const exitLine = await recorded;
  // The next round starts once the agent has removed this pod, so its removal never loads the engine then.
  const removed = agentLine((line) => line.includes(`PodRemoved ${NS}/${fullName}`), `${fullName} PodRemoved line`);
  rmSync(join(manifests, `${name}.json`));
  await removed;
  return {
    start: started - before,
    toCreate: pauseCreated - before,
    startFromCreate: started - pauseCreated,
    toDie: died - killedAt,
    toKillReturned: killReturned - killedAt,
    toRecorded: exitLine - killedAt,
  };
}

async function rawRound(i: number): Promise<Round> {
  const name = `r${i}`;
  const outDir = join(work, `out-${name}`);
  mkdirSync(outDir);
  const spec = pod({
    name,
    namespace: NS,
    node: NODE,
    grace: 0,
    containers: [container("c", { image: IMAGE, command: COMMAND, volumeMounts: [{ name: "out", mountPath: "/out", readOnly: false }] })],
  });
  spec.uid = randomBytes(8).toString("hex");
  spec.volumes = [{ name: "out", type: "hostPath", path: outDir, hostPathType: "Directory" }];
  const mounts = [{ source: outDir, target: "/out", readOnly: false }];
  const seenStart = firstInstruction(outDir);
  const before = performance.now();
  const pause = await raw.createContainer(sandboxCreateOptions(spec, "registry.k8s.io/pause:3.10"));
  await pause.start();
  const options = containerCreateOptions({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox: { id: pause.id, ip: "", podUid: spec.uid } }, mounts);
  const app = await raw.createContainer(options);
  await app.start();
  const started = await seenStart.at;
  seenStart.close();
  const pauseCreated = await eventAt(`create ${sandboxName(spec)}`);
  const killedAt = performance.now();
  await raw.getContainer(app.id).kill();
  const killReturned = performance.now();
  const died = await eventAt(`die ${options.name}`);
  await Promise.all([app.remove({ force: true }), pause.remove({ force: true })]);
  return { start: started - before, toCreate: pauseCreated - before, startFromCreate: started - pauseCreated, toDie: died - killedAt, toKillReturned: killReturned - killedAt };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function cleanup(): Promise<void> {
  const left = await observer.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
  await Promise.all(left.map((c) => observer.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
}

try {
  await agentRound(-1); // warm-up: the agent's first pass, adoption, the engine's caches
  await rawRound(-1);
  const agentRounds: Round[] = [];
  const rawRounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    agentRounds.push(await agentRound(i));
    rawRounds.push(await rawRound(i));
  }
  const med = (rounds: Round[], pick: (r: Round) => number) => median(rounds.map(pick));
  const row = (label: string, agentMs: number, floorLabel: string, floorMs: number) =>
    console.log(`${label.padEnd(40)} ${agentMs.toFixed(1).padStart(7)} ms   ${floorLabel.padEnd(40)} ${floorMs.toFixed(1).padStart(7)} ms   ${(agentMs / floorMs).toFixed(2)}x`);
  console.log(`docker runtime vs raw dockerode, medians of ${ROUNDS} rounds each, interleaved (load average ${loadavg()[0]!.toFixed(1)})`);
  row("pod start: rename -> first instruction", med(agentRounds, (r) => r.start), "raw: create+start pause and container", med(rawRounds, (r) => r.start));
  row("  of which rename -> pause create event", med(agentRounds, (r) => r.toCreate), "raw: create call -> pause create event", med(rawRounds, (r) => r.toCreate));
  row("  and pause create event -> first instr.", med(agentRounds, (r) => r.startFromCreate), "raw: the same span", med(rawRounds, (r) => r.startFromCreate));
  row("exit: kill -> agent's Exited line", med(agentRounds, (r) => r.toRecorded!), "kill -> die event (raw subscriber)", med(agentRounds, (r) => r.toDie));
  row("  (the engine: kill -> kill call returns)", med(agentRounds, (r) => r.toKillReturned), "kill -> die event (raw subscriber)", med(agentRounds, (r) => r.toDie));
} finally {
  agent.kill("SIGTERM");
  await new Promise((done) => agent.once("exit", done));
  (events as unknown as { destroy(): void }).destroy();
  await cleanup();
  rmSync(work, { recursive: true, force: true });
}
