/**
 * The loop under a hostile API client (issue 26): restart latency (a container's exit -> its next
 * start) and manifest latency (a manifest renamed in -> its container's first instruction), quiet
 * and then under a flood, on one agent in one run, side by side. The flood: bare TCP connections
 * (no handshake, no token) past the agent's open-files limit, TLS connections that send their head
 * a byte a second, and followed logs past the per-client cap, each reconnecting as it is cut. The
 * agent runs under `prlimit --nofile` so a flood past its limit is quick to raise. Goal: flooded
 * within 1.5x of quiet.
 *   node_modules/.bin/bun bench/api-flood.ts [--pods N] [--rounds R] [--open-files F]   (default: 5 pods, 5 rounds, 4096)
 */
import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { apiDirOf, loadCredentials } from "../src/api/http/tls.ts";
import { BenchAgent, BenchDir, percentile, podManifest, until } from "./stamps.ts";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const pods = flag("--pods", 5);
const rounds = flag("--rounds", 5);
const openFiles = flag("--open-files", 4096);
const BARE = Math.round(openFiles * 1.5);
const SLOW_HEADS = 200;
const FOLLOWS = 150;
const RECONNECT_MS = 100;

/** A round: `pods` new crashing pods renamed in; each one's manifest gap and restart gap. */
async function round(dir: BenchDir, agent: BenchAgent, tag: string): Promise<{ manifest: number[]; restart: number[] }> {
  const names = Array.from({ length: pods }, (_, i) => `${tag}-p${i}`);
  const renamedAt = new Map<string, number>();
  for (const name of names) {
    const renameIn = dir.stage(`${name}.yaml`, podManifest(name, dir, "crash"));
    renamedAt.set(name, Date.now());
    renameIn();
  }
  const stamped = (name: string, kind: string) => dir.readStamps(name).filter((s) => s.kind === kind).length;
  await until("every container's first start", () => names.every((n) => stamped(n, "s") >= 1), 60_000);
  await Bun.sleep(200);
  await until("every container's crash", () => names.every((n) => stamped(n, "e") >= 1) || (dir.trigger(), false), 60_000);
  await until("every container's second start", () => names.every((n) => stamped(n, "s") >= 2), 60_000);
  const manifest = names.map((name) => dir.readStamps(name)[0]!.ms - renamedAt.get(name)!);
  const restart = names.map((name) => {
    const stamps = dir.readStamps(name);
    return stamps.filter((s) => s.kind === "s")[1]!.ms - stamps.find((s) => s.kind === "e")!.ms;
  });
  const removed = agent.count("PodRemoved");
  for (const name of names) rmSync(join(dir.manifests, `${name}.yaml`));
  await until("the round's pods to be removed", () => agent.count("PodRemoved") >= removed + pods, 60_000);
  return { manifest, restart };
}

async function phase(dir: BenchDir, agent: BenchAgent, tag: string): Promise<{ manifest: number[]; restart: number[] }> {
  const all = { manifest: [] as number[], restart: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const { manifest, restart } = await round(dir, agent, `${tag}${r}`);
    all.manifest.push(...manifest);
    all.restart.push(...restart);
  }
  return all;
}

/** The hostile clients, each reconnecting (after a pause) whenever the agent cuts it. */
function flood(url: URL, credentials: { caPem: string; token: string }) {
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const counts = { bare: 0, slow: 0, follows: 0, refused: 0 };
  let stopped = false;
  const again = (open: () => void) => {
    if (stopped) return;
    const timer = setTimeout(() => (timers.delete(timer), open()), RECONNECT_MS);
    timers.add(timer);
  };
  const track = (socket: Socket, reopen: () => void) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      again(reopen);
    });
  };
  const bare = () => {
    counts.bare++;
    track(tcpConnect(Number(url.port), url.hostname), bare);
  };
  const slow = () => {
    counts.slow++;
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: credentials.caPem, servername: "localhost" });
    const head = "GET /api/v1/pods HTTP/1.1\r\nHost: localhost\r\n";
    let sent = 0;
    const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(head[sent++ % head.length]!)), 1000);
    socket.on("close", () => clearInterval(drip));
    track(socket, slow);
  };
  const follow = async () => {
    if (stopped) return;
    counts.follows++;
    const stop = new AbortController();
    try {
      const response = await fetch(`${url.origin}/api/v1/namespaces/bench/pods/target/log?follow=true`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem }, signal: stop.signal } as RequestInit);
      if (response.status === 429) counts.refused++;
      if (response.body) for await (const _ of response.body) if (stopped) break;
    } catch {
      // cut, or refused at accept: try again
    }
    again(() => void follow());
  };
  for (let i = 0; i < BARE; i++) bare();
  for (let i = 0; i < SLOW_HEADS; i++) slow();
  for (let i = 0; i < FOLLOWS; i++) void follow();
  return {
    counts,
    open: () => sockets.size,
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
    },
  };
}

const dir = new BenchDir();
const agent = new BenchAgent(dir, ["--api-listen", "127.0.0.1:0", "--node", "bench"], ["prlimit", `--nofile=${openFiles}:${openFiles}`]);
try {
  await until("the API's address", () => /minikubelet: api +https:/.test(agent.errors), 30_000);
  const url = new URL(/minikubelet: api +(https:\S+)/.exec(agent.errors)![1]!);
  const credentials = loadCredentials(apiDirOf(join(dir.path, "state.db")));
  dir.renameIn("target.yaml", podManifest("target", dir, "sleep"));
  await until("the followed pod's start", () => dir.readStamps("target").length > 0, 30_000);
  // One unmeasured round: the first pods pay for the agent's warm-up (its first spawns, the page cache).
  await round(dir, agent, "warm");
  const quiet = await phase(dir, agent, "q");
  const hostile = flood(url, credentials);
  await Bun.sleep(2000);
  const flooded = await phase(dir, agent, "f");
  const held = hostile.open();
  hostile.stop();
  const apiAlive = await fetch(`${url.origin}/api/v1/pods`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit).then((r) => r.status, (e: Error) => e.message);

  const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
  const row = (what: string, a: number[], b: number[]) => {
    const [qa, fa] = [percentile(a, 50), percentile(b, 50)];
    const [q99, f99] = [percentile(a, 99), percentile(b, 99)];
    console.log(`${what.padEnd(22)} quiet p50 ${ms(qa)} p99 ${ms(q99)}   flooded p50 ${ms(fa)} p99 ${ms(f99)}   flooded/quiet p50 ${(fa / qa).toFixed(2)}x (goal <= 1.5x)`);
  };
  console.log(`${pods} pods x ${rounds} rounds per phase; agent under --nofile=${openFiles}; flood: ${BARE} bare TCP, ${SLOW_HEADS} slow heads, ${FOLLOWS} follows, each reconnecting`);
  row("manifest -> running", quiet.manifest, flooded.manifest);
  row("exit -> restart", quiet.restart, flooded.restart);
  console.log(`flood: ${hostile.counts.bare} bare and ${hostile.counts.slow} slow-head connections opened, ${hostile.counts.follows} follows asked (${hostile.counts.refused} refused 429), ${held} sockets open at the end; the API after it: ${apiAlive}`);
  if (/EMFILE/.test(agent.errors)) console.log(`the agent ran out of descriptors: ${agent.errors.split("\n").filter((line) => line.includes("EMFILE"))[0]}`);
} finally {
  await agent.stop();
  dir.cleanup();
}
