/**
 * `minikubelet sql "SELECT ..." [-o json]`: a query on a read-only connection (SQLite itself
 * refuses writes, PRAGMAs included), printed as an aligned table or JSON.
 */
import { UsageError, UserError } from "./cli.ts";
import { openStoreReader } from "../store/reader.ts";
import { formatTable } from "../status/table.ts";

export interface SqlOptions {
  db?: string;
  output?: string;
}

export interface SqlDeps {
  stdout?: (text: string) => void;
}

export async function sqlCommand(query: string, options: SqlOptions, deps: SqlDeps = {}): Promise<number> {
  const { stdout = (t) => process.stdout.write(t) } = deps;
  if (options.output !== undefined && options.output !== "json") {
    throw new UsageError(`unknown output format ${JSON.stringify(options.output)} for -o; use json (default: a table)`);
  }
  using reader = openStoreReader(options.db);
  const db = reader.store.db;
  let rows: Record<string, unknown>[];
  let columns: string[];
  try {
    const statement = db.prepare(query);
    rows = statement.all() as Record<string, unknown>[];
    columns = statement.columnNames;
  } catch (error) {
    throw new UserError(`sql: ${(error as Error).message} (the connection to ${reader.path} is read-only)`);
  }
  if (options.output === "json") {
    stdout(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (columns.length === 0) return 0;
  stdout(formatTable(columns.map((c) => c.toUpperCase()), rows.map((row) => columns.map((c) => cell(row[c])))));
  return 0;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return String(value).replace(/\n/g, "\\n");
}
