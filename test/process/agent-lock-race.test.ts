/**
 * Two agents can never hold one database: contenders racing for many databases whose lock files are
 * stale (their pid is dead) never both win one. Before the flock, each could judge the same stale
 * file dead, and one's takeover deleted the other's fresh lock.
 */
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireAgentLock } from "../../src/store/agent-lock.ts";
import { tempDir } from "../store-fixtures.ts";

const CONTENDER = join(import.meta.dir, "..", "fixtures", "agent-lock-contender.ts");

test("contenders for stale locks never both hold one database", async () => {
  using dir = tempDir();
  const dead = spawn("true");
  await new Promise((resolve) => dead.once("exit", resolve));
  const paths = Array.from({ length: 300 }, (_, i) => join(dir.path, `db${i}`));
  for (const path of paths) writeFileSync(`${path}.lock`, `${dead.pid} 1\n`);
  const children = Array.from({ length: 3 }, () => spawn(process.execPath, [CONTENDER, ...paths], { stdio: ["pipe", "pipe", "inherit"] }));
  try {
    const wins = await Promise.all(
      children.map(
        (child) =>
          new Promise<string[]>((resolve, reject) => {
            let out = "";
            child.stdout!.on("data", (chunk) => {
              out += chunk;
              if (out.endsWith("\n")) resolve(JSON.parse(out) as string[]);
            });
            child.once("exit", (code) => reject(new Error(`contender exited ${code}`)));
          }),
      ),
    );
    const winners = new Map<string, number>();
    for (const won of wins) for (const path of won) winners.set(path, (winners.get(path) ?? 0) + 1);
    expect([...winners.entries()].filter(([, count]) => count > 1)).toEqual([]);
    // Every database went to exactly one of them.
    expect(winners.size).toBe(paths.length);
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}, 20_000);

test("a lock path that is a directory is refused in one line naming it", () => {
  using dir = tempDir();
  const path = join(dir.path, "state.db");
  mkdirSync(`${path}.lock`);
  expect(() => acquireAgentLock(path)).toThrow(`the agent lock ${path}.lock is a directory, not a file: remove it or use another --db`);
});
