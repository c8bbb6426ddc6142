/**
 * `minikubelet sql`: one reading statement, nothing that opens or creates a file, SQLite's own
 * words for its errors, and `--schema`.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runCLI } from "../../src/cli/cli.ts";
import { sqlCommand } from "../../src/cli/sql.ts";
import { desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { captureOutput } from "../capture-output.ts";

let stdout: string;
let stderr: string;
let output: { restore(): void };

beforeEach(() => {
  stdout = "";
  stderr = "";
  output = captureOutput((text) => (stdout += text), (text) => (stderr += text));
});

afterEach(() => output.restore());

async function database(dir: string): Promise<string> {
  const h = storeHarness(dir);
  await h.kubelet.sync(desired(pod({ name: "web" })));
  h.agent.close();
  return h.dbPath;
}

async function sql(db: string, query: string): Promise<string> {
  let out = "";
  await sqlCommand(query, { db }, { stdout: (text) => (out += text) });
  return out;
}

describe("sql runs one statement", () => {
  test("a second statement is refused, not silently dropped", async () => {
    using dir = tempDir();
    const db = await database(dir.path);
    await expect(sql(db, "SELECT name FROM pods; SELECT uid FROM pods")).rejects.toThrow(
      'sql: one statement at a time: found 2, the second begins "SELECT uid FROM pods"; run them one by one',
    );
  });

  test.each([
    ["a trailing semicolon", "SELECT name FROM pods;"],
    ["a trailing comment", "SELECT name FROM pods; -- the pods\n"],
    ["a semicolon inside a string", "SELECT name FROM pods WHERE name <> ';x'"],
    ["a semicolon inside a comment", "SELECT /* a; b */ name FROM pods"],
    ["a semicolon inside a quoted name", 'SELECT name AS "a;b" FROM pods'],
  ])("%s is one statement", async (_, query) => {
    using dir = tempDir();
    const db = await database(dir.path);
    expect((await sql(db, query)).split("\n")[1]).toBe("web-lab");
  });
});

describe("sql opens and creates no file", () => {
  test.each([
    ["VACUUM INTO", (file: string) => `VACUUM INTO '${file}'`, "VACUUM is refused"],
    ["ATTACH", (file: string) => `ATTACH 'file:${file}?mode=rwc' AS other`, "ATTACH is refused"],
    ["EXPLAIN VACUUM INTO", (file: string) => `explain vacuum into '${file}'`, "VACUUM is refused"],
  ])("%s is refused before the file exists", async (_, statement, message) => {
    using dir = tempDir();
    const db = await database(dir.path);
    const file = join(dir.path, "copy.db");
    await expect(sql(db, statement(file))).rejects.toThrow(`sql: ${message}`);
    expect(existsSync(file)).toBe(false);
  });

  test("a PRAGMA with a value is refused; reading pragmas run", async () => {
    using dir = tempDir();
    const db = await database(dir.path);
    await expect(sql(db, "PRAGMA user_version = 7")).rejects.toThrow("sql: PRAGMA user_version with a value is refused");
    await expect(sql(db, "pragma main.journal_mode=DELETE")).rejects.toThrow("sql: PRAGMA journal_mode with a value is refused");
    expect(await sql(db, "PRAGMA user_version")).toBe("USER_VERSION\n0\n");
    expect(await sql(db, "PRAGMA table_info(backoff)")).toContain("delay_ms");
  });
});

test("SQLite's errors are printed in its own words, with nothing added", async () => {
  using dir = tempDir();
  const db = await database(dir.path);
  expect(await runCLI(["sql", "SELEC name FROM pods", "--db", db])).toBe(1);
  expect(stderr).toBe('error: sql: near "SELEC": syntax error\n');
  stderr = "";
  expect(await runCLI(["sql", "DELETE FROM pods", "--db", db])).toBe(1);
  expect(stderr).toBe("error: sql: attempt to write a readonly database\n");
});

test("sql --schema prints every table's CREATE statement", async () => {
  using dir = tempDir();
  const db = await database(dir.path);
  expect(await runCLI(["sql", "--schema", "--db", db])).toBe(0);
  for (const table of ["schema_migrations", "pods", "containers", "attempts", "backoff", "events"]) {
    expect(stdout).toMatch(new RegExp(`^CREATE TABLE "?${table}"? \\(`, "m"));
  }
  expect(stdout).toContain("deletion_requested_at");
  stderr = "";
  expect(await runCLI(["sql", "--db", db])).toBe(2);
  expect(stderr).toBe('error: sql needs a query (sql "SELECT ...") or --schema\n');
});
