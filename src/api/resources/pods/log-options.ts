/**
 * pods/log query parameters as the API server converts and validates PodLogOptions: a value that
 * does not parse, or breaks a rule, is a 400 naming the parameter.
 */
import type { LogQuery } from "../../../logs/attempt-logs.ts";
import { queryFlag } from "../../http/query-flags.ts";
import { ApiError } from "../../http/status.ts";

export interface PodLogRequest extends LogQuery {
  container?: string;
  previous: boolean;
}

/** PodLogOptions.stream's values (Kubernetes 1.32+), as the one stream read; All reads both. */
const STREAMS = { All: undefined, Stdout: "stdout", Stderr: "stderr" } as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

export function parsePodLogQuery(query: URLSearchParams, nowMs: number): PodLogRequest {
  const request: PodLogRequest = {
    container: query.get("container") || undefined,
    previous: flag(query, "previous"),
    follow: flag(query, "follow"),
    timestamps: flag(query, "timestamps"),
  };
  const tailLines = whole(query, "tailLines");
  const limitBytes = whole(query, "limitBytes");
  const sinceSeconds = whole(query, "sinceSeconds");
  const sinceTime = query.get("sinceTime");
  if (tailLines !== undefined) {
    if (tailLines < 0) throw invalid("tailLines", tailLines, "must be greater than or equal to 0");
    request.tailLines = tailLines;
  }
  if (limitBytes !== undefined) {
    if (limitBytes < 1) throw invalid("limitBytes", limitBytes, "must be greater than 0");
    request.limitBytes = limitBytes;
  }
  const stream = query.get("stream");
  if (stream !== null) {
    // The API server's rules (ValidatePodLogOptions): All is both streams, and a tail only with All.
    if (!Object.hasOwn(STREAMS, stream)) throw ApiError.badRequest(`stream: Unsupported value: "${stream}": supported values: "All", "Stderr", "Stdout"`);
    if (stream !== "All" && tailLines !== undefined) throw ApiError.badRequest("`tailLines` and specific `stream` are mutually exclusive for now");
    const only = STREAMS[stream as keyof typeof STREAMS];
    if (only) request.stream = only;
  }
  if (sinceSeconds !== undefined && sinceTime) throw ApiError.badRequest("at most one of `sinceTime` or `sinceSeconds` may be specified");
  if (sinceSeconds !== undefined) {
    if (sinceSeconds < 1) throw invalid("sinceSeconds", sinceSeconds, "must be greater than 0");
    request.sinceMs = nowMs - sinceSeconds * 1000;
  }
  if (sinceTime) {
    const ms = RFC3339.test(sinceTime) ? Date.parse(sinceTime) : NaN;
    if (Number.isNaN(ms)) throw ApiError.badRequest(`sinceTime: Invalid value: "${sinceTime}": must be an RFC3339 time, e.g. 2006-01-02T15:04:05Z`);
    request.sinceMs = ms;
  }
  return request;
}

function invalid(name: string, value: number, rule: string): ApiError {
  return ApiError.badRequest(`${name}: Invalid value: ${value}: ${rule}`);
}

/** A PodLogOptions boolean, decoded as the API server decodes it (query-flags.ts): absent is false. */
function flag(query: URLSearchParams, name: string): boolean {
  return queryFlag(query, name) ?? false;
}

function whole(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  const n = /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw ApiError.badRequest(`${name}: Invalid value: "${value}": must be a whole number`);
  return n;
}
