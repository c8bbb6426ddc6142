import { expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { openAgentDatabase } from "../../src/store/open.ts";
import { tempDir } from "../store-fixtures.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const ENV = { ...process.env, TZ: "UTC", NO_COLOR: "1" };

test("every reading command on a missing database prints one line and exits 1", () => {
  using dir = tempDir();
  const db = join(dir.path, "missing.db");
  for (const args of [["get", "pods"], ["describe", "pod", "web"], ["events"], ["logs", "web"], ["sql", "SELECT 1"]]) {
    const result = spawnSync(BUN, [join(ROOT, "src/main.ts"), ...args, "--db", db], { env: ENV, encoding: "utf8" });
    expect({ args, status: result.status, stderr: result.stderr }).toEqual({
      args,
      status: 1,
      stderr: `error: state database ${db} does not exist (start "minikubelet run" first, or pass --db PATH)\n`,
    });
  }
});

test("a second agent is refused while another process holds the database, and starts after a kill -9", async () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const script = `import { openAgentDatabase } from ${JSON.stringify(join(ROOT, "src/store/open.ts"))};
openAgentDatabase(${JSON.stringify(db)}); console.log("ready"); setInterval(() => {}, 1000);`;
  const agent = spawn(BUN, ["-e", script], { env: ENV, stdio: ["ignore", "pipe", "inherit"] });
  try {
    await new Promise<void>((resolveReady, reject) => {
      agent.stdout!.on("data", (chunk) => String(chunk).includes("ready") && resolveReady());
      agent.once("exit", (code) => reject(new Error(`agent exited with ${code}`)));
    });
    expect(() => openAgentDatabase(db)).toThrow(`in use by another minikubelet agent (pid ${agent.pid}`);
    // Readers are not agents: they read beside the holder.
    const read = spawnSync(BUN, [join(ROOT, "src/main.ts"), "sql", "SELECT count(*) AS n FROM pods", "--db", db], { env: ENV, encoding: "utf8" });
    expect(read.stdout).toBe("N\n0\n");
  } finally {
    agent.kill("SIGKILL");
    await new Promise((done) => (agent.exitCode !== null ? done(null) : agent.once("exit", done)));
  }
  const next = openAgentDatabase(db);
  next.close();
});
