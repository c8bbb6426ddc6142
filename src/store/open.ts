/**
 * Opening the state database: the agent's read-write connection (lock, pragmas, migrations) and
 * the commands' read-only connections (never migrate, never block the agent: WAL lets readers
 * see the last commit while the agent writes).
 */
import { Database } from "bun:sqlite";
import { existsSync } from "./sync-fs.ts";
import { dirname } from "node:path";
import { realClock, type Clock } from "../clock.ts";
import { createPrivateFile, makePrivateDir, tightenMode } from "../host/private-files.ts";
import { acquireAgentLock, type AgentLock } from "./agent-lock.ts";
import { DatabaseLockedError, DatabaseMissingError, SchemaError, StoreError } from "./errors.ts";
import { MIGRATIONS, migrationHash, type Migration } from "./migrations.ts";

/** How long a command's read waits for a lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;
/**
 * The agent's wait: bun:sqlite waits on the loop's own thread, so a long wait would freeze every
 * pod behind one write. Only the agent writes, and WAL readers never block it, so a lock held
 * elsewhere (someone's sqlite3 shell in a transaction) is rare: the write fails fast and the loop
 * retries it with its back-off, the pods running on meanwhile.
 */
export const AGENT_BUSY_TIMEOUT_MS = 250;

export interface AgentDatabase {
  db: Database;
  lock: AgentLock;
  path: string;
  /** Closes the connection and releases the agent lock. Idempotent. */
  close(): void;
}

/**
 * Opens (creating it if needed) the database for the one agent: takes the agent lock, sets WAL
 * with synchronous=NORMAL (bun:sqlite would keep FULL: an fsync per commit), a busy timeout and
 * foreign keys, then applies pending migrations. The file is 0600 before SQLite first opens it, and
 * SQLite gives its -wal and -shm the database's mode; an older agent's wider files are narrowed.
 */
export function openAgentDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): AgentDatabase {
  makePrivateDir(dirname(path));
  const lock = acquireAgentLock(path);
  let db: Database | undefined;
  try {
    createPrivateFile(path);
    for (const file of databaseFiles(path)) tightenMode(file);
    db = new Database(path, { create: true, readwrite: true, strict: true });
    db.run(`PRAGMA busy_timeout = ${AGENT_BUSY_TIMEOUT_MS}`);
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    migrate(db, path, migrations);
  } catch (error) {
    db?.close();
    lock.release();
    throw wrapSqliteError(error, path);
  }
  const opened = db;
  let closed = false;
  return {
    db: opened,
    lock,
    path,
    close() {
      if (closed) return;
      closed = true;
      opened.close();
      lock.release();
    },
  };
}

/** The database and the files SQLite keeps beside it. */
function databaseFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/**
 * A read-only connection for a command. SQLite itself refuses writes on it, PRAGMAs included. Throws
 * DatabaseMissingError when there is no file, SchemaError when the schema is not this binary's.
 */
export function openReadonlyDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  if (!existsSync(path)) throw new DatabaseMissingError(path);
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true, strict: true });
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Read-only at the file level stops writes; query_only also stops the writing PRAGMAs.
    db.run("PRAGMA query_only = ON");
    const pending = checkSchema(db, path, migrations);
    if (pending.length > 0) {
      throw new SchemaError(path, `state database ${path} is at schema version ${migrations.length - pending.length}, this binary needs ${migrations.length}; start "minikubelet run" once to migrate it`);
    }
    return db;
  } catch (error) {
    db?.close();
    throw wrapSqliteError(error, path);
  }
}

/**
 * Applies every pending migration in order, each in its own transaction with its row in
 * schema_migrations (file name and sha256). Refuses a database that has a migration this binary
 * does not know (a newer minikubelet wrote it) or whose applied file has changed since.
 */
export function migrate(db: Database, path: string, migrations: readonly Migration[] = MIGRATIONS, clock: Clock = realClock): void {
  db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const pending = checkSchema(db, path, migrations);
  const record = db.prepare("INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)");
  for (const migration of pending) {
    db.transaction(() => {
      db.run(migration.sql);
      record.run(migration.version, migration.name, migrationHash(migration.sql), clock.now());
    })();
  }
}

interface AppliedRow {
  version: number;
  name: string;
  sha256: string;
}

/** Validates what is applied against `migrations`; returns the ones still to apply. */
function checkSchema(db: Database, path: string, migrations: readonly Migration[]): Migration[] {
  const hasTable = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!hasTable) {
    if (db.query("SELECT 1 FROM sqlite_master LIMIT 1").get()) {
      throw new SchemaError(path, `${path} is not a minikubelet state database (it has tables but no schema_migrations)`);
    }
    return [...migrations];
  }
  const applied = db.query("SELECT version, name, sha256 FROM schema_migrations ORDER BY version").all() as AppliedRow[];
  const known = new Map(migrations.map((m) => [m.version, m]));
  for (const row of applied) {
    const migration = known.get(row.version);
    if (!migration) {
      throw new SchemaError(path, `state database ${path} has migration ${row.name} (version ${row.version}) that this minikubelet does not know: it was written by a newer version`);
    }
    const hash = migrationHash(migration.sql);
    if (hash !== row.sha256) {
      throw new SchemaError(path, `migration ${row.name} applied to ${path} has sha256 ${row.sha256.slice(0, 12)}..., but this binary's copy has ${hash.slice(0, 12)}...: an applied migration must never change`);
    }
  }
  const done = new Set(applied.map((row) => row.version));
  return migrations.filter((m) => !done.has(m.version));
}

/** SQLITE_BUSY becomes DatabaseLockedError; other SQLite errors name the file. */
export function wrapSqliteError(error: unknown, path: string): unknown {
  if (error instanceof StoreError) return error;
  const code = (error as { code?: string }).code ?? "";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return new DatabaseLockedError(path, { cause: error });
  if (code.startsWith("SQLITE_")) return new StoreError(path, `state database ${path}: ${(error as Error).message}`, { cause: error });
  return error;
}
