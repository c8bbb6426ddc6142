/**
 * Issue 7 and 11 fault injection, process runtime, compiled binary: the churn of fault-churn.ts,
 * FAULT_ROUNDS kill -9s (default 20). The runtime is read off its directory: a container attempt
 * ran when its monitor recorded a pid, and a stray is any process naming our workspace that is
 * not the agent or a running container's (monitors name their container's directory).
 */
import { test } from "bun:test";
import { runChurn, type ChurnRuntime } from "./fault-churn.ts";
import { processE2E, isRunning, processContainers, processesMentioning, Workspace } from "./helpers.ts";

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 20);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`FAULT_ROUNDS must be a whole number above 0 (got ${process.env.FAULT_ROUNDS})`);

const e2e = processE2E();

const processRuntime: ChurnRuntime = {
  flags: [],
  namespace: "fault",
  imageLines: "      image: busybox",
  eventWaitMs: 2500,
  settleMs: 20_000,
  async containers(ws) {
    return processContainers(ws).map((c) => ({ ...c, ran: c.pid !== undefined, running: !c.exited && c.pid !== undefined && isRunning(c.pid) }));
  },
  async strays(ws, _liveUids, running, agentPid) {
    // Processes are listed before containers are read, so each process seen had its directory by then.
    const ours = processesMentioning(ws.path).filter((p) => p.pid !== agentPid);
    const dirs = running.map((c) => `/containers/${c.id} `);
    return ours.filter((p) => !dirs.some((dir) => p.cmdline.includes(dir)));
  },
  async leftovers(ws) {
    return processesMentioning(ws.path);
  },
};

test(`${ROUNDS} kill -9s during churn, some right after Started, Killing or Exited: no duplicates, no orphans, no attempt twice, counts match attempts, database intact`, async () => {
  await runChurn(processRuntime, (e2e.ws = new Workspace()), ROUNDS, e2e.agents);
}, 60_000 + ROUNDS * 4000);
