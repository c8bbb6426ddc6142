/**
 * `minikubelet sql "SELECT ..." [-o json]`: one reading statement on a read-only connection, printed
 * as an aligned table or JSON; `sql --schema` prints the tables' CREATE statements. What is refused
 * and why is the store's (src/store/user-query.ts); SQLite's own errors are printed as SQLite words them.
 */
import { UsageError, UserError } from "./errors.ts";
import { openStoreReader } from "../store/reader.ts";
import { runUserQuery, schemaStatements, UserQueryError, type QueryResult } from "../store/user-query.ts";
import { formatTable } from "../status/table.ts";

export interface SqlOptions {
  db?: string;
  output?: string;
  schema?: boolean;
}

export interface SqlDeps {
  stdout?: (text: string) => void;
}

export async function sqlCommand(query: string | undefined, options: SqlOptions, deps: SqlDeps = {}): Promise<number> {
  const { stdout = (t) => process.stdout.write(t) } = deps;
  if (options.output !== undefined && options.output !== "json") {
    throw new UsageError(`unknown output format ${JSON.stringify(options.output)} for -o; use json (default: a table)`);
  }
  if (options.schema && query !== undefined) throw new UsageError("give either a query or --schema, not both");
  if (!options.schema && query === undefined) throw new UsageError('sql needs a query (sql "SELECT ...") or --schema');
  using reader = openStoreReader(options.db);
  const db = reader.store.db;
  if (options.schema) {
    stdout(schemaStatements(db).map((statement) => `${statement};\n`).join("\n"));
    return 0;
  }
  let result: QueryResult;
  try {
    result = runUserQuery(db, String(query));
  } catch (error) {
    if (error instanceof UserQueryError || (error as { name?: string }).name === "SQLiteError") throw new UserError(`sql: ${(error as Error).message}`);
    throw error;
  }
  const { columns, rows } = result;
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
