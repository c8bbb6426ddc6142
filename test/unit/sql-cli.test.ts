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

describe("sql bounds a query's time and its output's memory", () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir[Symbol.dispose]());

  test("a never-ending recursive query stops at --timeout with one line naming the limit", async () => {
    const db = await database(dir.path);
    const endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n";
    let out = "";
    const started = performance.now();
    const run = sqlCommand(endless, { db, timeout: "300ms" }, { stdout: (text) => (out += text) });
    await expect(run).rejects.toThrow("sql: the query ran past its time limit of 300ms (--timeout); narrow it (WHERE, LIMIT) or give it longer");
    expect(performance.now() - started).toBeLessThan(5000);
    // What it read before the limit was printed as it came: a table's head and rows, not nothing.
    expect(out.split("\n")[0]).toBe("I");
    expect(out.split("\n").length).toBeGreaterThan(1000);
  });

  test("--timeout takes a Go duration of at least 1ms; the default is 30s", async () => {
    const db = await database(dir.path);
    await expect(sqlCommand("SELECT 1 AS one", { db, timeout: "soon" })).rejects.toThrow('--timeout must be a duration such as 30s (got "soon")');
    expect(await sql(db, "SELECT 1 AS one")).toBe("ONE\n1\n");
  });

  test("a table of a million rows is printed as the rows come (no spread of every width), aligned by the first thousand", async () => {
    const db = await database(dir.path);
    let lines = 0;
    let first = "";
    await sqlCommand("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 1000000) SELECT i, 'x' AS tag FROM n", { db }, {
      stdout: (text) => {
        if (!first) first = text.slice(0, text.indexOf("\n", text.indexOf("\n") + 1));
        lines += text.split("\n").length - 1;
      },
    });
    expect(lines).toBe(1_000_001);
    expect(first).toBe("I      TAG\n1      x");
  }, 60_000);

  test("-o json streams the rows as JSON.stringify(rows, null, 2) would print them", async () => {
    const db = await database(dir.path);
    const query = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 3) SELECT i, 'a\"b' AS s FROM n";
    let out = "";
    await sqlCommand(query, { db, output: "json" }, { stdout: (text) => (out += text) });
    expect(out).toBe(`${JSON.stringify([1, 2, 3].map((i) => ({ i, s: 'a"b' })), null, 2)}\n`);
    let empty = "";
    await sqlCommand("SELECT 1 AS i WHERE 0", { db, output: "json" }, { stdout: (text) => (empty += text) });
    expect(empty).toBe("[]\n");
  });
});
