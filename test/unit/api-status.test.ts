/** Errors answer as the API server's do: a v1 Status, and a Retry-After header when they say when to retry. */
import { expect, test } from "bun:test";
import { ApiError, statusResponse } from "../../src/api/http/status.ts";

test("a Status that says when to retry carries Retry-After, as the API server sends it with a 429", async () => {
  const response = statusResponse(new ApiError(429, "TooManyRequests", "too many open watches", { retryAfterSeconds: 1 }));
  expect(response.status).toBe(429);
  expect(response.headers.get("Retry-After")).toBe("1");
  expect(await response.json()).toMatchObject({ kind: "Status", reason: "TooManyRequests", details: { retryAfterSeconds: 1 }, code: 429 });
  expect(statusResponse(ApiError.notFound("pods", "web")).headers.get("Retry-After")).toBeNull();
});
