/**
 * The compiled binary takes nothing from the directory it is started in. A Bun executable reads
 * `.env` and `bunfig.toml` from there by default: a `.env` would point every command at another
 * database (MINIKUBELET_DB), and a bunfig's preload would run its script inside the agent, as
 * whoever started it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness } from "../store-fixtures.ts";
import { BINARY, ENV, ensureBinary } from "./helpers.ts";

let dir = "";
let db = "";
/** Named so that no other database on the machine (the system one the README's demo fills, as root) holds it. */
const MARKER = `dotenv-marker-${process.pid}`;

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "minikubelet-cwd-"));
  const h = storeHarness(dir);
  await h.kubelet.sync(desired(pod({ name: MARKER, containers: [container("web")] })));
  h.kubelet.stop();
  h.agent.close();
  db = h.dbPath;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The binary started in `cwd`, without MINIKUBELET_DB and with an empty home, so only `cwd` could name a database. */
function runIn(cwd: string, args: string[]) {
  const env: Record<string, string | undefined> = { ...ENV };
  delete env.MINIKUBELET_DB;
  const result = spawnSync(BINARY, args, { cwd, env: { ...env, HOME: cwd, XDG_STATE_HOME: join(cwd, "state") }, encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("a .env in the working directory does not choose the database", () => {
  const plain = mkdtempSync(join(dir, "plain-"));
  const withDotenv = mkdtempSync(join(dir, "dotenv-"));
  writeFileSync(join(withDotenv, ".env"), `MINIKUBELET_DB=${db}\n`);
  expect(runIn(plain, ["get", "pods", "-A", "--db", db]).stdout).toContain(MARKER);
  const listed = runIn(withDotenv, ["get", "pods", "-A"]);
  expect(listed.stdout).not.toContain(MARKER);
  // Exactly what the same command says in a directory without one (whichever database that is, and
  // it may have an agent whose pods' ages tick between two listings: asked again until they agree).
  const comparable = (cwd: string) => {
    const result = runIn(cwd, ["get", "pods", "-A"]);
    return { ...result, stderr: result.stderr.replaceAll(cwd, "DIR") };
  };
  let pair = [comparable(withDotenv), comparable(plain)];
  for (let attempt = 0; attempt < 3 && !Bun.deepEquals(pair[0], pair[1]); attempt++) pair = [comparable(withDotenv), comparable(plain)];
  expect(pair[0]).toEqual(pair[1]);
});

test("a bunfig.toml in the working directory runs nothing", () => {
  const cwd = mkdtempSync(join(dir, "bunfig-"));
  const marker = join(cwd, "preloaded");
  writeFileSync(join(cwd, "preload.ts"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");\n`);
  writeFileSync(join(cwd, "bunfig.toml"), 'preload = ["./preload.ts"]\n[run]\npreload = ["./preload.ts"]\n');
  for (const args of [["--version"], ["get", "pods", "-A", "--db", db]]) {
    expect(runIn(cwd, args).status).toBe(0);
    expect(existsSync(marker)).toBe(false);
  }
});
