/**
 * Errors as the API server answers them: a v1 Status with code, reason and message, which kubectl
 * prints as `Error from server (NotFound): pods "x" not found`. Handlers throw ApiError; the server
 * turns it (and anything unexpected, as InternalError) into the response.
 */

/** The API server's StatusReason for each code we answer with. */
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "Invalid"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Timeout";

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface V1Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  /** `pods "web" not found`, as the API server words a missing object. */
  static notFound(resource: string, name: string, kind = resource.replace(/s$/, "")): ApiError {
    return new ApiError(404, "NotFound", `${resource} "${name}" not found`, { name, kind });
  }

  static badRequest(message: string): ApiError {
    return new ApiError(400, "BadRequest", message);
  }

  toStatus(): V1Status {
    const status: V1Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: this.message, reason: this.reason, code: this.code };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** The JSON response for an error, with Retry-After when it says when to retry; `headers` adds e.g. `WWW-Authenticate`. */
export function statusResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  const retry = error.details?.retryAfterSeconds;
  const retryHeader: Record<string, string> = retry === undefined ? {} : { "Retry-After": String(retry) };
  return Response.json(error.toStatus(), { status: error.code, headers: { "Content-Type": "application/json", ...retryHeader, ...headers } });
}
