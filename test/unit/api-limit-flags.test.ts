/** `run`'s API limit flags: the API server's defaults, Go durations, 0 as no limit where the API server takes it, refusals naming flag and value. */
import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/api/http/context.ts";
import { apiLimitsOption } from "../../src/cli/run/api-limits.ts";

test("no flag is the API server's defaults: 400 reads, 200 writes in flight, a 1m request timeout, 1800 s watch lifetime", () => {
  expect(apiLimitsOption({})).toEqual(DEFAULT_LIMITS);
  expect(DEFAULT_LIMITS).toMatchObject({ maxRequestsInflight: 400, maxMutatingRequestsInflight: 200, requestTimeoutMs: 60_000, minRequestTimeoutSeconds: 1800, readHeaderTimeoutMs: 32_000 });
});

test("each flag is read as its kind: counts, Go durations (a bare number is seconds), 0 in flight is no limit", () => {
  expect(
    apiLimitsOption({ maxRequestsInflight: 0, maxMutatingRequestsInflight: "5", requestTimeout: "90s", minRequestTimeout: 60, maxStreamsPerClient: 3, tlsHandshakeTimeout: 2, readHeaderTimeout: "1m30s", maxConnections: "100" }),
  ).toMatchObject({ maxRequestsInflight: Number.POSITIVE_INFINITY, maxMutatingRequestsInflight: 5, requestTimeoutMs: 90_000, minRequestTimeoutSeconds: 60, maxStreamsPerClient: 3, tlsHandshakeTimeoutMs: 2_000, readHeaderTimeoutMs: 90_000, maxConnections: 100 });
});

test("a bad value is refused naming the flag and the value", () => {
  const cases: [flags: Record<string, unknown>, message: string][] = [
    [{ maxRequestsInflight: -1 }, "--max-requests-inflight must be a whole number above 0, or 0 for no limit (got -1)"],
    [{ maxConnections: 0 }, "--max-connections must be a whole number above 0 (got 0)"],
    [{ maxStreamsPerClient: "many" }, '--max-streams-per-client must be a whole number above 0 (got "many")'],
    [{ requestTimeout: "soon" }, '--request-timeout must be a duration above 0, such as 1m or 30s (got "soon")'],
    [{ readHeaderTimeout: "0" }, '--read-header-timeout must be a duration above 0, such as 1m or 30s (got "0")'],
  ];
  for (const [flags, message] of cases) expect(() => apiLimitsOption(flags)).toThrow(message);
});
