/** The docker pod IP, read one way from a pause container's inspect and from its list entry. */
import { expect, test } from "bun:test";
import { sandboxIp } from "../../src/runtime/docker/docker-sandbox.ts";

test("the host network is the host's loopback, whatever the engine reports", () => {
  expect(sandboxIp("host", { IPAddress: "", Networks: { host: { IPAddress: "" } } })).toBe("127.0.0.1");
  expect(sandboxIp("host", undefined)).toBe("127.0.0.1");
});

test("an inspect's top-level address comes first, else the first network that has one", () => {
  expect(sandboxIp("bridge", { IPAddress: "172.17.0.5", Networks: { bridge: { IPAddress: "172.17.0.9" } } })).toBe("172.17.0.5");
  expect(sandboxIp("bridge", { IPAddress: "", Networks: { none: { IPAddress: "" }, bridge: { IPAddress: "172.17.0.9" } } })).toBe("172.17.0.9");
});

test("a list entry has networks only; no address yet is empty", () => {
  expect(sandboxIp("bridge", { Networks: { bridge: { IPAddress: "172.17.0.7" } } })).toBe("172.17.0.7");
  expect(sandboxIp("bridge", { Networks: {} })).toBe("");
  expect(sandboxIp(undefined, undefined)).toBe("");
});
