/** Narrow predicates over dockerode's errors, which carry the engine's HTTP status code. */

export function dockerStatusCode(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "statusCode" in error) {
    const code = (error as { statusCode: unknown }).statusCode;
    return typeof code === "number" ? code : undefined;
  }
  return undefined;
}

/** 404: no such container, image or exec. */
export function isNotFound(error: unknown): boolean {
  return dockerStatusCode(error) === 404;
}

/** 409: a name already in use, or a container not running (kill, exec). */
export function isConflict(error: unknown): boolean {
  return dockerStatusCode(error) === 409;
}

/** 304: already started / already stopped. */
export function isNotModified(error: unknown): boolean {
  return dockerStatusCode(error) === 304;
}

/** The engine's message without dockerode's "(HTTP code 404) no such container - " prefix. */
export function dockerMessage(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const json = (error as { json?: { message?: unknown } }).json;
    if (json && typeof json.message === "string") return json.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * The engine gave no HTTP answer at all (dockerd stopped or restarting): a failure of the runtime,
 * not of the container, so callers must not count it as a failed start.
 */
export class EngineUnreachableError extends Error {
  override readonly name = "EngineUnreachableError";
  constructor(
    readonly endpoint: string,
    cause: unknown,
  ) {
    super(`docker engine at ${endpoint} is unreachable: ${dockerMessage(cause)}`, { cause });
  }
}

/** Rethrows a transport failure (no HTTP status) as EngineUnreachableError; anything else as is. */
export function rethrowUnreachable(error: unknown, endpoint: string): never {
  if (error instanceof Error && dockerStatusCode(error) === undefined) throw new EngineUnreachableError(endpoint, error);
  throw error;
}

/**
 * Bun's fetch says "Was there a typo in the url or port?" for a socket nobody listens on; its
 * `code` (FailedToOpenSocket, ConnectionRefused, ...) says more to someone looking for dockerd.
 */
export function fetchConnectionError(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (!(error instanceof Error) || typeof code !== "string" || "statusCode" in error) return error;
  return Object.assign(new Error(`connection failed (${code})`, { cause: error }), { code });
}
