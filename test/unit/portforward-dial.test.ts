/**
 * A failed dial or transfer in a Go dialer's words, which is what the kubelet's runtimes put in the
 * message kubectl prints for a forwarded connection that failed.
 */
import { expect, test } from "bun:test";
import { DialTimeoutError, dialErrorMessage } from "../../src/api/portforward/portforward-dial.ts";

const errno = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

test.each([
  [{ host: "127.0.0.1", port: 81 }, "ECONNREFUSED", "dial tcp4 127.0.0.1:81: connect: connection refused"],
  [{ host: "172.17.0.3", port: 8080 }, "EHOSTUNREACH", "dial tcp4 172.17.0.3:8080: connect: no route to host"],
  [{ host: "::1", port: 81 }, "ECONNREFUSED", "dial tcp6 [::1]:81: connect: connection refused"],
  [{ host: "127.0.0.1", port: 81 }, "EWHATEVER", "dial tcp4 127.0.0.1:81: connect: connect EWHATEVER"],
])("dialling %j failing with %s reads %s", (address, code, message) => {
  expect(dialErrorMessage(address, errno(code))).toBe(message);
});

test("a dial we gave up on reads as Go's dial timeout", () => {
  const address = { host: "172.17.0.3", port: 80 };
  expect(dialErrorMessage(address, new DialTimeoutError(address))).toBe("dial tcp4 172.17.0.3:80: i/o timeout");
});
