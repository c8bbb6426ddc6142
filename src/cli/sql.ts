/**
 * `minikubelet sql "SELECT ..." [-o json]`: one reading statement on a read-only connection, printed
 * as an aligned table or JSON; `sql --schema` prints the tables' CREATE statements. What is refused
 * and why is the store's (src/store/user-query.ts); SQLite's own errors are printed as SQLite words them.
 * Rows are printed as SQLite steps to them, so a query of millions of rows costs the memory of one
 * row and a table's first TABLE_WIDTH_ROWS, and a query still stepping at `--timeout` is stopped.
 */
import { UsageError, UserError } from "./errors.ts";
import { openStoreReader } from "../store/reader.ts";
import { runUserQuery, schemaStatements, UserQueryError, type QueryResult } from "../store/user-query.ts";
import { formatTable } from "../printers/table.ts";
import { parseGoDuration } from "../printers/go-duration.ts";
import { realClock, type Clock } from "../clock.ts";

/** `--timeout`'s default: long enough for any query of our tables, short of holding the WAL for good. */
const DEFAULT_TIMEOUT = "30s";
/** The rows a table's column widths are taken from; later ones are printed with those widths as they come. */
const TABLE_WIDTH_ROWS = 1000;

export interface SqlOptions {
  db?: string;
  output?: string;
  schema?: boolean;
  /** A Go duration (`30s`): how long the query may step before it is stopped. */
  timeout?: string;
}

export interface SqlDeps {
  stdout?: (text: string) => void;
  clock?: Pick<Clock, "now">;
}

export async function sqlCommand(query: string | undefined, options: SqlOptions, deps: SqlDeps = {}): Promise<number> {
  const { stdout = (t) => process.stdout.write(t) } = deps;
  if (options.output !== undefined && options.output !== "json") {
    throw new UsageError(`unknown output format ${JSON.stringify(options.output)} for -o; use json (default: a table)`);
  }
  if (options.schema && query !== undefined) throw new UsageError("give either a query or --schema, not both");
  if (!options.schema && query === undefined) throw new UsageError('sql needs a query (sql "SELECT ...") or --schema');
  const timeout = options.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = parseGoDuration(String(timeout));
  if (timeoutMs === undefined || timeoutMs < 1) throw new UsageError(`--timeout must be a duration such as 30s (got ${JSON.stringify(timeout)})`);
  using reader = openStoreReader(options.db);
  const db = reader.store.db;
  if (options.schema) {
    stdout(schemaStatements(db).map((statement) => `${statement};\n`).join("\n"));
    return 0;
  }
  const clock = deps.clock ?? realClock;
  const deadline = clock.now() + timeoutMs;
  let result: QueryResult;
  try {
    result = runUserQuery(db, String(query));
    const rows = withinDeadline(result.rows, () => clock.now() > deadline, timeout);
    if (options.output === "json") printJson(rows, stdout);
    else printTable(result.columns, rows, stdout);
  } catch (error) {
    if (error instanceof UserQueryError || (error as { name?: string }).name === "SQLiteError") throw new UserError(`sql: ${(error as Error).message}`);
    throw error;
  }
  return 0;
}

/** The rows until `pastDeadline`; then a UserQueryError naming the limit (stopping the iteration finalizes the statement). */
function* withinDeadline<T>(rows: Iterable<T>, pastDeadline: () => boolean, timeout: string): Generator<T> {
  for (const row of rows) {
    if (pastDeadline()) throw new UserQueryError(`the query ran past its time limit of ${timeout} (--timeout); narrow it (WHERE, LIMIT) or give it longer`);
    yield row;
  }
}

/** As `JSON.stringify(rows, null, 2)` prints the array, one row at a time. */
function printJson(rows: Iterable<Record<string, unknown>>, stdout: (text: string) => void): void {
  let first = true;
  for (const row of rows) {
    stdout(`${first ? "[\n" : ",\n"}${JSON.stringify(row, null, 2).replace(/^/gm, "  ")}`);
    first = false;
  }
  stdout(first ? "[]\n" : "\n]\n");
}

/** An aligned table whose widths come from its first TABLE_WIDTH_ROWS rows; a wider later cell pushes its line out. */
function printTable(columns: string[], rows: Iterable<Record<string, unknown>>, stdout: (text: string) => void): void {
  const headers = columns.map((c) => c.toUpperCase());
  const cells = (row: Record<string, unknown>) => columns.map((c) => cell(row[c]));
  const head: string[][] = [];
  const iterator = rows[Symbol.iterator]();
  for (let next = iterator.next(); ; next = iterator.next()) {
    if (next.done) {
      if (columns.length > 0) stdout(formatTable(headers, head));
      return;
    }
    head.push(cells(next.value));
    if (head.length === TABLE_WIDTH_ROWS) break;
  }
  const widths = headers.map((header, column) => head.reduce((width, row) => Math.max(width, row[column]!.length), header.length));
  const line = (row: string[]) => `${row.map((text, column) => (column === row.length - 1 ? text : text.padEnd(widths[column]! + 3))).join("").trimEnd()}\n`;
  stdout(formatTable(headers, head));
  let batch = "";
  for (let next = iterator.next(); !next.done; next = iterator.next()) {
    batch += line(cells(next.value));
    if (batch.length >= 64 * 1024) {
      stdout(batch);
      batch = "";
    }
  }
  if (batch) stdout(batch);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return String(value).replace(/\n/g, "\\n");
}
