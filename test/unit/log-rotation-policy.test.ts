/** The two log flags, read and checked as the kubelet reads containerLogMaxSize and containerLogMaxFiles. */
import { expect, test } from "bun:test";
import { containerLogPolicy, DEFAULT_LOG_POLICY, LogPolicyError } from "../../src/runtime/log-rotation-policy.ts";

test("sizes are the API server's quantities (any suffix or exponent), rounded up to a byte", () => {
  const size = (maxSize: string) => containerLogPolicy({ maxSize }).maxBytes;
  expect(size("10Mi")).toBe(10 * 1024 * 1024);
  expect(size("64Ki")).toBe(65536);
  expect(size("1G")).toBe(1e9);
  expect(size("500k")).toBe(500_000);
  expect(size("1.5Ki")).toBe(1536);
  expect(size("0.1")).toBe(1);
  expect(size("4096")).toBe(4096);
  expect(size("1e3")).toBe(1000);
  expect(size("2E6")).toBe(2_000_000);
  for (const bad of ["", "10MB", "10mi", "-1Mi", "Mi", "1e3x", "ten", "1Ei0"]) {
    expect(() => size(bad)).toThrow(/--container-log-max-size must be a positive size/);
  }
});

test("the defaults are the kubelet's: 10Mi and 5 files", () => {
  expect(containerLogPolicy({})).toEqual(DEFAULT_LOG_POLICY);
  expect(DEFAULT_LOG_POLICY).toEqual({ maxBytes: 10 * 1024 * 1024, maxFiles: 5 });
  expect(containerLogPolicy({ maxSize: "64Ki", maxFiles: 3 })).toEqual({ maxBytes: 65536, maxFiles: 3 });
  // cac hands a numeric-looking value over as a number.
  expect(containerLogPolicy({ maxSize: 1000, maxFiles: "2" })).toEqual({ maxBytes: 1000, maxFiles: 2 });
});

test("fewer than two files, a zero size or a size that is no quantity is refused, naming the flag", () => {
  expect(() => containerLogPolicy({ maxFiles: 1 })).toThrow(new LogPolicyError('--container-log-max-files must be a whole number of at least 2 (got 1)'));
  expect(() => containerLogPolicy({ maxFiles: "2.5" })).toThrow(/--container-log-max-files/);
  expect(() => containerLogPolicy({ maxSize: "0" })).toThrow(/--container-log-max-size must be a positive size/);
  expect(() => containerLogPolicy({ maxSize: "10MB" })).toThrow(/--container-log-max-size .*\(got "10MB"\)/);
});
