/** The store's failures, each naming the database file and what is wrong with it, in one line. */

export class StoreError extends Error {
  override readonly name: string = "StoreError";
  constructor(
    readonly path: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** No database at the path: nothing has run there yet (or the wrong --db). */
export class DatabaseMissingError extends StoreError {
  override readonly name = "DatabaseMissingError";
  constructor(path: string) {
    super(path, `state database ${path} does not exist (start "minikubelet run" first, or pass --db PATH)`);
  }
}

/** SQLite answered SQLITE_BUSY past the busy timeout. */
export class DatabaseLockedError extends StoreError {
  override readonly name = "DatabaseLockedError";
  constructor(path: string, options?: ErrorOptions) {
    super(path, `state database ${path} is locked by another connection; try again`, options);
  }
}

/** The schema table disagrees with the migrations this binary carries. */
export class SchemaError extends StoreError {
  override readonly name = "SchemaError";
}

/** Another live agent holds the database. */
export class AgentLockError extends StoreError {
  override readonly name = "AgentLockError";
  constructor(
    path: string,
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(path, `state database ${path} is in use by another minikubelet agent (pid ${pid}, lock file ${lockFile}); stop it first or use another --db`);
  }
}
