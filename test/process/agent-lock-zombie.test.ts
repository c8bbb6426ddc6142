/**
 * Found by the e2e restarts: an agent killed with `kill -9` stays a zombie until its parent reaps it
 * (under an init that reaps late, for a while). /proc still has its pid and start time, so the lock
 * took the dead agent for a live one and refused the restart.
 */
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireAgentLock } from "../../src/store/agent-lock.ts";
import { tempDir } from "../store-fixtures.ts";

function statOf(pid: number): { state: string; startTicks: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, startTicks: fields[19]! };
}

test("a lock held by a zombie (killed, not yet reaped) is stale and taken over", async () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  // `exec sleep 30` replaces the shell, so nothing reaps the background child once it is killed.
  const parent = spawn("sh", ["-c", "sleep 100 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    const pid = await new Promise<number>((resolve) => parent.stdout!.once("data", (chunk) => resolve(Number(String(chunk).trim()))));
    // Killed while the shell is still a shell, the child is reaped by it; once it is `sleep`, nothing reaps.
    for (let i = 0; i < 500 && readFileSync(`/proc/${parent.pid}/comm`, "utf8").trim() !== "sleep"; i++) await Bun.sleep(10);
    const { startTicks } = statOf(pid);
    writeFileSync(`${db}.lock`, `${pid} ${startTicks}\n`);
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 100 && statOf(pid).state !== "Z"; i++) await Bun.sleep(10);
    expect(statOf(pid).state).toBe("Z");
    const lock = acquireAgentLock(db);
    expect(readFileSync(`${db}.lock`, "utf8").split(" ")[0]).toBe(String(process.pid));
    lock.release();
  } finally {
    parent.kill("SIGKILL");
  }
});
