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

  /** NewNotFound: `pods "web" not found`; details name the object and its resource (group "" is the core group). */
  static notFound(resource: string, name: string, group = ""): ApiError {
    return new ApiError(404, "NotFound", `${qualified(resource, group)} "${name}" not found`, objectDetails(resource, name, group));
  }

  /** NewAlreadyExists: `namespaces "demo" already exists`. */
  static alreadyExists(resource: string, name: string, group = ""): ApiError {
    return new ApiError(409, "AlreadyExists", `${qualified(resource, group)} "${name}" already exists`, objectDetails(resource, name, group));
  }

  /** NewConflict: `Operation cannot be fulfilled on pods "web": <reason>`. */
  static conflict(resource: string, name: string, reason: string, group = ""): ApiError {
    return new ApiError(409, "Conflict", `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${reason}`, objectDetails(resource, name, group));
  }

  /** NewForbidden: `namespaces "default" is forbidden: <reason>` (`pods is forbidden: ...` without a name); `causes` as admission adds them. */
  static forbidden(resource: string, name: string, reason: string, group = "", causes?: StatusCause[]): ApiError {
    const what = name === "" ? qualified(resource, group) : `${qualified(resource, group)} "${name}"`;
    return new ApiError(403, "Forbidden", `${what} is forbidden: ${reason}`, { ...objectDetails(resource, name, group), ...(causes && { causes }) });
  }

  /**
   * NewInvalid: `Pod "web" is invalid: <field>: <message>` (several causes in brackets, comma
   * separated); details name the kind, not the resource, and carry every cause.
   */
  static invalid(kind: string, name: string, causes: StatusCause[], group = ""): ApiError {
    const rendered = causes.map((cause) => (cause.field ? `${cause.field}: ${cause.message}` : cause.message));
    const list = rendered.length === 0 ? "" : `: ${rendered.length === 1 ? rendered[0] : `[${rendered.join(", ")}]`}`;
    return new ApiError(422, "Invalid", `${group ? `${kind}.${group}` : kind} "${name}" is invalid${list}`, { ...objectDetails(kind, name, group), causes });
  }

  /** NewMethodNotSupported: `create is not supported on resources of kind "services"`; details name the resource only. */
  static methodNotSupported(resource: string, action: string, group = ""): ApiError {
    return new ApiError(405, "MethodNotAllowed", `${action} is not supported on resources of kind "${qualified(resource, group)}"`, objectDetails(resource, "", group));
  }

  /** NewInternalError: `Internal error occurred: <message>`, the message also its one cause. */
  static internal(message: string): ApiError {
    return new ApiError(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });
  }

  /** NewBadRequest: the message alone, no details. */
  static badRequest(message: string): ApiError {
    return new ApiError(400, "BadRequest", message);
  }

  toStatus(): V1Status {
    const status: V1Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: this.message, reason: this.reason, code: this.code };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** A GroupResource as the API server prints it: `pods`, `leases.coordination.k8s.io`. */
function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** The details the API server's constructors fill; an empty name or group is left out, as Go's omitempty does. */
function objectDetails(kind: string, name: string, group: string): StatusDetails {
  return { ...(name && { name }), ...(group && { group }), kind };
}

/** The JSON response for an error, with Retry-After when it says when to retry; `headers` adds e.g. `WWW-Authenticate`. */
export function statusResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  const retry = error.details?.retryAfterSeconds;
  const retryHeader: Record<string, string> = retry === undefined ? {} : { "Retry-After": String(retry) };
  return Response.json(error.toStatus(), { status: error.code, headers: { "Content-Type": "application/json", ...retryHeader, ...headers } });
}
