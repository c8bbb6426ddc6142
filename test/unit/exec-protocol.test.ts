import { describe, expect, test } from "bun:test";
import {
  chooseExecProtocol,
  errorStatusFrame,
  exitStatusFrame,
  parseClientMessage,
  parseExecOptions,
} from "../../src/api/streaming/exec-protocol.ts";
import { channelFrame } from "../../src/api/streaming/ws-channels.ts";
import { ApiError } from "../../src/api/http/status.ts";

const bytes = (channel: number, text: string) => channelFrame(channel, text);
const statusOf = (message: Uint8Array) => ({ channel: message[0], status: JSON.parse(new TextDecoder().decode(message.subarray(1))) });

function badRequest(query: string): string {
  try {
    parseExecOptions(new URLSearchParams(query));
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error(`${query}: accepted`);
}

describe("subprotocol", () => {
  test.each([
    ["v5.channel.k8s.io", "v5.channel.k8s.io"],
    ["v4.channel.k8s.io,v5.channel.k8s.io", "v5.channel.k8s.io"],
    ["v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io", "v4.channel.k8s.io"],
    ["v3.channel.k8s.io, base64.channel.k8s.io", "base64.channel.k8s.io"],
    ["channel.k8s.io", "channel.k8s.io"],
    ["v3.channel.k8s.io, v2.channel.k8s.io", undefined],
    [null, undefined],
  ])("offer %p gets %p", (offer, chosen) => {
    expect(chooseExecProtocol(offer)).toBe(chosen as never);
  });
});

describe("query", () => {
  test("kubectl's query: repeated command in order, container and flags", () => {
    const options = parseExecOptions(new URLSearchParams("command=sh&command=-c&command=echo+hi%3B+exit+3&container=c&stderr=true&stdout=true"));
    expect(options).toEqual({ command: ["sh", "-c", "echo hi; exit 3"], container: "c", stdin: false, stdout: true, stderr: true, tty: false });
  });

  test("with tty the kubelet drops stderr (one output stream) rather than refusing", () => {
    const options = parseExecOptions(new URLSearchParams("command=sh&stdin=true&stdout=true&stderr=true&tty=true"));
    expect(options).toMatchObject({ stdin: true, stdout: true, stderr: false, tty: true });
  });

  test("Go's boolean spellings are accepted", () => {
    expect(parseExecOptions(new URLSearchParams("command=ls&stdout=1&stdin=T&tty=False"))).toMatchObject({ stdout: true, stdin: true, tty: false });
  });

  test("bad queries are 400s naming the problem", () => {
    expect(badRequest("stdout=true")).toBe("you must specify at least one command for the container");
    expect(badRequest("command=ls")).toBe("you must specify at least 1 of stdin, stdout, stderr");
    expect(badRequest("command=ls&stdout=yes")).toBe('invalid value for stdout: "yes" is not a boolean');
  });
});

describe("client messages", () => {
  test("stdin, resize and (v5) the close of stdin", () => {
    expect(parseClientMessage("v5.channel.k8s.io", bytes(0, "data\n"))).toEqual({ kind: "stdin", data: new TextEncoder().encode("data\n") });
    expect(parseClientMessage("v5.channel.k8s.io", bytes(4, '{"Width":120,"Height":40}'))).toEqual({ kind: "resize", size: { width: 120, height: 40 } });
    expect(parseClientMessage("v5.channel.k8s.io", new Uint8Array([255, 0]))).toEqual({ kind: "close", channel: 0 });
  });

  test("v4 has no close channel; empty, malformed and unknown messages are skipped", () => {
    expect(parseClientMessage("v4.channel.k8s.io", new Uint8Array([255, 0]))).toEqual({ kind: "ignored" });
    for (const message of [new Uint8Array(), new Uint8Array([0]), bytes(4, "{"), bytes(4, '{"Width":0,"Height":5}'), bytes(4, '{"Width":70000,"Height":5}'), bytes(1, "x"), bytes(9, "x")]) {
      expect(parseClientMessage("v5.channel.k8s.io", message)).toEqual({ kind: "ignored" });
    }
  });
});

describe("the end of a session on channel 3", () => {
  test("exit 0 is Success", () => {
    expect(statusOf(exitStatusFrame(0))).toEqual({ channel: 3, status: { metadata: {}, status: "Success" } });
  });

  test("a non-zero exit is the kubelet's NonZeroExitCode with an ExitCode cause kubectl exits with", () => {
    const { channel, status } = statusOf(exitStatusFrame(3));
    expect(channel).toBe(3);
    expect(status).toMatchObject({ status: "Failure", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
  });

  test("a failure without an exit code is an InternalError with its message", () => {
    const { status } = statusOf(errorStatusFrame("exec in container x: container is exited, not running"));
    expect(status).toMatchObject({ status: "Failure", reason: "InternalError", code: 500, message: "Internal error occurred: exec in container x: container is exited, not running" });
  });
});
