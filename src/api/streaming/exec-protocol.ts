/**
 * The Kubernetes remotecommand protocol over WebSocket (apimachinery's util/remotecommand, the
 * kubelet's streaming server), as kubectl 1.30+ speaks it: each binary message is one channel byte
 * and its payload (ws-channels.ts). Server to client: 1 stdout, 2 stderr, 3 the end as a v1 Status. Client to
 * server: 0 stdin, 4 a resize `{"Width":w,"Height":h}`, and in v5 255 with one byte, the channel
 * the client closes (0: end of stdin). v4 has no close message: stdin ends with the connection.
 * The kubelet's streaming server also speaks the unversioned `channel.k8s.io` (v1, what the
 * upstream e2e tests dial) and the base64 variants (text messages): v1 has no exit code, so its
 * error channel carries nothing when the command succeeds and the failure's message as text.
 * Pure: no sockets here, only bytes in and out.
 */
import { ApiError } from "../http/status.ts";
import { channelFrame, decodeChannelMessage, type ChannelCodec } from "./ws-channels.ts";
import type { TerminalSize } from "../../runtime/runtime.ts";

export const EXEC_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "channel.k8s.io", "base64.channel.k8s.io"] as const;
export type ExecProtocol = (typeof EXEC_PROTOCOLS)[number];

/** How the protocol frames its messages: text in base64 for the base64 family, else binary. */
export function execCodec(protocol: ExecProtocol): ChannelCodec {
  return protocol.includes("base64.") ? "base64" : "binary";
}

/**
 * What the error channel carries at the end, given the session's v1 Status JSON: the Status itself
 * from v4 on; for v1 (v1WriteStatusFunc) nothing on success, the message of a failure.
 */
export function endOfSession(protocol: ExecProtocol, status: string): string | undefined {
  if (protocol.startsWith("v")) return status;
  const parsed = JSON.parse(status) as { status?: string; message?: string };
  return parsed.status === "Success" ? undefined : (parsed.message ?? "");
}

export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** What `pods/NAME/exec` was asked for (the PodExecOptions query). */
export interface ExecOptions {
  command: string[];
  container?: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export type ClientMessage =
  | { kind: "stdin"; data: Uint8Array }
  | { kind: "resize"; size: TerminalSize }
  | { kind: "close"; channel: number }
  /** Empty, or on a channel a client does not write to: skipped, as the kubelet skips it. */
  | { kind: "ignored" };

/** The best protocol of the client's `Sec-WebSocket-Protocol` offer, in our order of preference, or undefined when it offers none we speak. */
export function chooseExecProtocol(offer: string | null): ExecProtocol | undefined {
  const offered = new Set((offer ?? "").split(",").map((protocol) => protocol.trim()));
  return EXEC_PROTOCOLS.find((protocol) => offered.has(protocol));
}

/** The query parameters naming the streams: the API's (PodExecOptions) or the kubelet port's. */
export interface StreamParamNames {
  stdin: string;
  stdout: string;
  stderr: string;
}

export const API_STREAM_PARAMS: StreamParamNames = { stdin: "stdin", stdout: "stdout", stderr: "stderr" };
/** What the API server sends the kubelet (core's ExecStdinParam and the rest: `input`, `output`, `error`). */
export const KUBELET_STREAM_PARAMS: StreamParamNames = { stdin: "input", stdout: "output", stderr: "error" };

/** Parses the query as the API server does; a bad one is a 400 naming what is wrong. */
export function parseExecOptions(query: URLSearchParams, names: StreamParamNames = API_STREAM_PARAMS): ExecOptions {
  const command = query.getAll("command");
  if (command.length === 0) throw ApiError.badRequest("you must specify at least one command for the container");
  return { command, ...parseStreamOptions(query, names) };
}

/**
 * The query's container and streams (PodExecOptions and PodAttachOptions share them), as the
 * API server and kubelet parse them; a bad value, or no stream at all, is a 400.
 */
export function parseStreamOptions(query: URLSearchParams, names: StreamParamNames = API_STREAM_PARAMS): Omit<ExecOptions, "command"> {
  const flag = (name: string): boolean => {
    const value = query.get(name);
    if (value === null || value === "") return false;
    if (["1", "t", "T", "true", "TRUE", "True"].includes(value)) return true;
    if (["0", "f", "F", "false", "FALSE", "False"].includes(value)) return false;
    throw ApiError.badRequest(`invalid value for ${name}: ${JSON.stringify(value)} is not a boolean`);
  };
  const tty = flag("tty");
  // The kubelet's rule: a terminal has one output stream, so stderr is dropped, not refused.
  const options: Omit<ExecOptions, "command"> = { stdin: flag(names.stdin), stdout: flag(names.stdout), stderr: flag(names.stderr) && !tty, tty };
  const container = query.get("container");
  if (container) options.container = container;
  if (!options.stdin && !options.stdout && !options.stderr) throw ApiError.badRequest("you must specify at least 1 of stdin, stdout, stderr");
  return options;
}

export function parseClientMessage(protocol: ExecProtocol, message: Uint8Array): ClientMessage {
  const decoded = decodeChannelMessage(execCodec(protocol), message);
  if (!decoded) return { kind: "ignored" };
  const { channel, payload } = decoded;
  if (channel === CHANNEL.stdin) return payload.length > 0 ? { kind: "stdin", data: payload } : { kind: "ignored" };
  if (channel === CHANNEL.resize) return parseResize(payload);
  if (channel === CHANNEL.close && protocol === "v5.channel.k8s.io" && payload.length > 0) return { kind: "close", channel: payload[0] as number };
  return { kind: "ignored" };
}

function parseResize(payload: Uint8Array): ClientMessage {
  const size = parseTerminalSize(new TextDecoder().decode(payload));
  return size ? { kind: "resize", size } : { kind: "ignored" };
}

/** One resize message, `{"Width":w,"Height":h}`, or undefined when it is not a sane one. */
export function parseTerminalSize(text: string): TerminalSize | undefined {
  try {
    const size = JSON.parse(text) as { Width?: unknown; Height?: unknown };
    const width = Number(size.Width);
    const height = Number(size.Height);
    const valid = (n: number) => Number.isInteger(n) && n > 0 && n <= 0xffff;
    return valid(width) && valid(height) ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The channel 3 message that ends a session: Success, or the kubelet's NonZeroExitCode Failure
 * whose ExitCode cause kubectl turns into its own exit code ("command terminated with exit code N").
 */
export function exitStatusFrame(exitCode: number): Uint8Array {
  return channelFrame(CHANNEL.error, exitStatus(exitCode));
}

/** The end of a session as the v1 Status JSON (SPDY's error stream carries it as is). */
export function exitStatus(exitCode: number): string {
  if (exitCode === 0) return successStatus();
  return JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: exit status ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  });
}

/** The end of a session that went well (an attach's end always, as the kubelet words it). */
export function successStatus(): string {
  return JSON.stringify({ metadata: {}, status: "Success" });
}

/** The channel 3 message for a session that failed before or without an exit code (kubectl prints the message). */
export function errorStatusFrame(message: string): Uint8Array {
  return channelFrame(CHANNEL.error, errorStatus(message));
}

export function errorStatus(message: string): string {
  return JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `Internal error occurred: ${message}`,
    reason: "InternalError",
    details: { causes: [{ message }] },
    code: 500,
  });
}
