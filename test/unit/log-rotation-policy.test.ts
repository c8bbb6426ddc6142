/** The two log flags, read and checked as the kubelet reads containerLogMaxSize and containerLogMaxFiles. */
import { expect, test } from "bun:test";
import { byteQuantity, containerLogPolicy, DEFAULT_LOG_POLICY, LogPolicyError } from "../../src/logs/rotation-policy.ts";

test("sizes are quantities with binary or decimal suffixes, rounded up to a byte", () => {
  expect(byteQuantity("10Mi")).toBe(10 * 1024 * 1024);
  expect(byteQuantity("64Ki")).toBe(65536);
  expect(byteQuantity("1G")).toBe(1e9);
  expect(byteQuantity("500k")).toBe(500_000);
  expect(byteQuantity("1.5Ki")).toBe(1536);
  expect(byteQuantity("0.1")).toBe(1);
  expect(byteQuantity("4096")).toBe(4096);
  for (const bad of ["", "10MB", "10mi", "-1Mi", "Mi", "1e3x", "ten"]) expect(byteQuantity(bad)).toBeUndefined();
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
