/**
 * The CLI's error classes, in a file of their own so that cli.ts (which turns them into exit codes)
 * and the subcommands (which throw them) both import them and neither imports the other.
 */

/** A bad command line: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** An error the user can act on: printed as one line, exit code 1. */
export class UserError extends Error {
  override readonly name: string = "UserError";
}

/**
 * kubectl's answer for a missing object (`Error from server (NotFound): pods "web" not found`),
 * printed as is, with a second line saying where to look instead.
 */
export class NotFoundError extends UserError {
  override readonly name = "NotFoundError";
  constructor(resource: string, objectName: string, readonly hint: string) {
    super(`Error from server (NotFound): ${resource} "${objectName}" not found\n${hint}`);
  }
}
