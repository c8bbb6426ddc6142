/**
 * How a refused pod write is answered, in the API server's words, for every write route (create,
 * delete, update): admission problems become 422 Invalid with one `details.causes` entry per field
 * (kubectl prints `The Pod "web" is invalid: spec.containers[0].image: Required value`), unknown
 * fields under fieldValidation=Strict a 400 strict decoding error, and the store's refusals
 * (ApiPodWriteError) their 404 or 409.
 */
import { formatIssue, formatPath, type Issue } from "../../../manifest/errors.ts";
import type { ApiPodWriteError } from "../../../store/api-pod-store.ts";
import { ApiError, type StatusCause } from "../../http/status.ts";

/** The field error an issue is, as the API server renders it (`Required value`, `Invalid value: ...`). */
export function issueCause(issue: Issue): StatusCause {
  const field = formatPath(issue.path);
  const required = /^required(?:: (.*))?$/.exec(issue.message);
  if (required) return { reason: "FieldValueRequired", message: required[1] ? `Required value: ${required[1]}` : "Required value", field };
  if (issue.message.startsWith("Forbidden: ")) return { reason: "FieldValueForbidden", message: issue.message, field };
  if (issue.message.startsWith("Not found: ")) return { reason: "FieldValueNotFound", message: issue.message, field };
  if (issue.message.startsWith("Unsupported value: ")) return { reason: "FieldValueNotSupported", message: issue.message, field };
  if (issue.message.startsWith("Too many: ")) return { reason: "FieldValueTooMany", message: issue.message, field };
  if (issue.message.startsWith("Too long: ")) return { reason: "FieldValueTooLong", message: issue.message, field };
  return { reason: "FieldValueInvalid", message: `Invalid value: ${issue.message}`, field };
}

/** 422 Invalid naming every problem, or 400 for a value that does not decode or when `strict` refuses unknown fields (the API server decodes before it validates). */
export function invalidPod(name: string, issues: readonly Issue[], strict: boolean): ApiError {
  // The API server decodes before it validates: a value it cannot decode is all it reports.
  const undecodable = issues.find((issue) => issue.undecodable);
  if (undecodable) return ApiError.badRequest(`Pod in version "v1" cannot be handled as a Pod: ${undecodable.message}`);
  const unknown = issues.filter((issue) => issue.unknownField);
  if (strict && unknown.length > 0) {
    return ApiError.badRequest(`strict decoding error: ${unknown.map((issue) => `unknown field ${JSON.stringify(formatPath(issue.path))}`).join(", ")}`);
  }
  return ApiError.invalid("Pod", name, issues.filter((issue) => !issue.unknownField).map(issueCause));
}

/**
 * The `Warning` headers of an admitted write, which kubectl prints: each unknown field a lenient
 * write accepted (fieldValidation=Warn, the default; Ignore says nothing of them), and each field
 * the agent accepts but does not honour, whatever the validation.
 */
export function writeWarnings(issues: readonly Issue[], validation: "Strict" | "Warn" | "Ignore"): string[] {
  return issues
    .filter((issue) => !issue.unknownField || validation === "Warn")
    .map((issue) => `299 - ${JSON.stringify(issue.unknownField ? `unknown field ${JSON.stringify(formatPath(issue.path))}` : formatIssue(issue))}`);
}

/** The store's refusal as the API server's Status. */
export function storeRefusal(error: ApiPodWriteError): ApiError {
  const details = { name: error.pod.name, kind: "pods" };
  switch (error.reason) {
    case "NotFound":
      return new ApiError(404, "NotFound", error.message, details);
    case "AlreadyExists":
      return new ApiError(409, "AlreadyExists", error.message, details);
    case "Conflict":
      return new ApiError(409, "Conflict", error.message, details);
  }
}

/** `fieldValidation`: Strict refuses unknown fields, Warn (the default) and Ignore accept them. */
export function fieldValidation(query: URLSearchParams): "Strict" | "Warn" | "Ignore" {
  const value = query.get("fieldValidation") ?? "Warn";
  if (value === "Strict" || value === "Warn" || value === "Ignore") return value;
  throw ApiError.badRequest(`fieldValidation must be one of "Ignore", "Warn" or "Strict" (got ${JSON.stringify(value)})`);
}

/** `dryRun=All` (query or DeleteOptions): validate and answer, write nothing. */
export function isDryRun(query: URLSearchParams, body?: { dryRun?: unknown }): boolean {
  const values = [...query.getAll("dryRun"), ...(Array.isArray(body?.dryRun) ? body.dryRun : [])];
  for (const value of values) if (value !== "All") throw ApiError.badRequest(`dryRun must be "All" (got ${JSON.stringify(value)})`);
  return values.length > 0;
}
