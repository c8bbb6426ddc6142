/**
 * The user's own SQL (`minikubelet sql`), on a read-only connection. SQLite refuses writes there
 * itself, but not everything: `VACUUM INTO` creates its file before it fails, and bun:sqlite runs
 * only the first of several statements, silently. So one statement is run, and statements that
 * open or write a file (ATTACH, VACUUM, PRAGMA with a value) are refused before SQLite sees them.
 * SQLite's own error messages are passed on as they are.
 */
import type { Database } from "bun:sqlite";

export class UserQueryError extends Error {
  override readonly name = "UserQueryError";
}

export interface QueryResult {
  columns: string[];
  /** The rows as SQLite steps to them, one at a time; the statement is finalized when they end or the loop stops. */
  rows: Iterable<Record<string, unknown>>;
}

/** Pragmas whose argument names what to read (`PRAGMA table_info(pods)`), not a value to set. */
const READING_PRAGMAS = new Set([
  "foreign_key_check",
  "foreign_key_list",
  "index_info",
  "index_list",
  "index_xinfo",
  "integrity_check",
  "quick_check",
  "table_info",
  "table_list",
  "table_xinfo",
]);

/** Prepares one reading statement; UserQueryError for what is refused, SQLite's error for the rest (also while stepping). */
export function runUserQuery(db: Database, sql: string): QueryResult {
  const statements = splitStatements(sql);
  if (statements.length === 0) throw new UserQueryError("no statement to run");
  if (statements.length > 1) {
    throw new UserQueryError(`one statement at a time: found ${statements.length}, the second begins ${JSON.stringify(excerpt(statements[1]!))}; run them one by one`);
  }
  refuseFileAccess(statements[0]!);
  const statement = db.prepare(sql);
  // Stepped row by row, not `all()`: a query may never end (a recursive CTE) or return millions of
  // rows, and its reader decides when to stop (sql's --timeout) and prints as it goes.
  function* rows(): Generator<Record<string, unknown>> {
    try {
      yield* statement.iterate() as IterableIterator<Record<string, unknown>>;
    } finally {
      statement.finalize();
    }
  }
  return { columns: statement.columnNames, rows: rows() };
}

/** The CREATE statement of every table, in creation order. */
export function schemaStatements(db: Database): string[] {
  const rows = db.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").all() as { sql: string }[];
  return rows.map((row) => row.sql);
}

/**
 * The statements in `sql` with comments blanked out (strings and quoted names kept), split at the
 * semicolons outside them; statements that are only blanks are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    const closing = char === "'" || char === '"' || char === "`" ? char : char === "[" ? "]" : undefined;
    if (closing) {
      // A doubled quote inside a quoted run is the quote itself; scanning on past it is the same.
      const end = sql.indexOf(closing, i + 1);
      const stop = end < 0 ? sql.length : end + 1;
      current += sql.slice(i, stop);
      i = stop;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
      current += " ";
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
      current += " ";
    } else if (char === ";") {
      statements.push(current);
      current = "";
      i++;
    } else {
      current += char;
      i++;
    }
  }
  statements.push(current);
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "");
}

function refuseFileAccess(statement: string): void {
  const words = statement.split(/[\s(=;.]+/).map((word) => word.toUpperCase());
  let first = 0;
  if (words[first] === "EXPLAIN") first += words[first + 1] === "QUERY" && words[first + 2] === "PLAN" ? 3 : 1;
  const keyword = words[first];
  if (keyword === "ATTACH" || keyword === "DETACH") {
    throw new UserQueryError(`${keyword} is refused: sql reads the state database only and opens no other file`);
  }
  if (keyword === "VACUUM") throw new UserQueryError("VACUUM is refused: it writes a database file (VACUUM INTO creates one), and sql only reads");
  if (keyword === "PRAGMA") refusePragmaValue(statement.slice(statement.toUpperCase().indexOf("PRAGMA") + "PRAGMA".length));
}

/** `PRAGMA name = value` and `PRAGMA name(value)` set something, unless the pragma only reads. */
function refusePragmaValue(rest: string): void {
  const match = /^\s*(?:[\w"`[\]]+\s*\.\s*)?["`[]?(\w+)["`\]]?\s*([=(])?/.exec(rest);
  if (!match || match[2] === undefined) return;
  const name = match[1]!.toLowerCase();
  if (match[2] === "(" && READING_PRAGMAS.has(name)) return;
  throw new UserQueryError(`PRAGMA ${name} with a value is refused: sql only reads (PRAGMA ${name} alone reads it)`);
}

function excerpt(statement: string): string {
  const line = statement.replace(/\s+/g, " ");
  return line.length > 40 ? `${line.slice(0, 40)}...` : line;
}
