/**
 * `pods/NAME/attach` driven as the server drives it, for the unit tests: the route's handler with a
 * WebSocket or SPDY upgrade request, then the session on a fake socket (or fake SPDY connection)
 * that records what is sent, over a fake-runtime agent whose pod has containers of every stdin and
 * terminal shape.
 */
import { join } from "node:path";
import { Duplex } from "node:stream";
import { attachRoutes } from "../src/api/streaming/attach-api.ts";
import type { ApiContext } from "../src/api/http/context.ts";
import type { ApiRequest, ApiSocket, SpdySession, WebSocketSession } from "../src/api/http/http.ts";
import type { SpdyConnection, SpdyStream } from "../src/api/http/spdy.ts";
import { ApiError } from "../src/api/http/status.ts";
import { WEBSOCKET_START_DELAY_MS } from "../src/api/streaming/stream-websocket.ts";
import { apiContext } from "./api-objects-fixtures.ts";
import type { FakeClock } from "./fake-clock.ts";
import { container, desired, pod } from "./pod-builder.ts";
import { storeHarness, tempDir } from "./store-fixtures.ts";

/**
 * Pod web-lab in demo: `shell` (stdin, stdinOnce, tty: what `kubectl run -it` makes), `pipe`
 * (stdin, stdinOnce: `kubectl run -i`), `keep` (stdin without stdinOnce) and `plain` (neither).
 */
export async function attachAgent(options: { runtime?: boolean; restartPolicy?: "Never"; logFiles?: boolean } = {}) {
  const dir = tempDir();
  // With `logFiles`, each attempt's output file is recorded as DIR/ID.log, as the process runtime's are.
  const h = storeHarness(dir.path, { ...(options.logFiles && { logPathOf: (_uid: string, id: string) => join(dir.path, `${id}.log`) }) });
  const containers = [
    container("shell", { stdin: true, stdinOnce: true, tty: true }),
    container("pipe", { stdin: true, stdinOnce: true }),
    container("keep", { stdin: true }),
    container("plain"),
  ];
  await h.kubelet.sync(desired(pod({ name: "web", containers, restartPolicy: options.restartPolicy })));
  await h.advance(1);
  const api = apiContext(h.dbPath, h.clock, { ...(options.runtime !== false && { runtime: h.runtime }) });
  return {
    h,
    api,
    dir: dir.path,
    [Symbol.dispose]() {
      api[Symbol.dispose]();
      h.agent.close();
      dir[Symbol.dispose]();
    },
  };
}

/** The route's answer: its Response and the session it upgraded to, or the ApiError it threw. */
export async function attach(api: ApiContext, query: string, options: { spdy?: boolean; pod?: string } = {}) {
  const name = options.pod ?? "web-lab";
  const url = new URL(`https://127.0.0.1/api/v1/namespaces/demo/pods/${name}/attach?${query}`);
  const headers: Record<string, string> = options.spdy
    ? { Upgrade: "SPDY/3.1", Connection: "Upgrade", "X-Stream-Protocol-Version": "v4.channel.k8s.io, v3.channel.k8s.io" }
    : { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": "v5.channel.k8s.io" };
  let webSocket: WebSocketSession | undefined;
  let spdy: SpdySession | undefined;
  const request: ApiRequest = {
    method: options.spdy ? "POST" : "GET",
    url,
    headers: new Headers(headers),
    params: { namespace: "demo", name },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade: (session) => void (webSocket = session),
    upgradeSpdy: (session) => void (spdy = session),
  };
  try {
    const response = await attachRoutes.find((route) => route.method === request.method)!.handle(request, api);
    return { response, webSocket, spdy };
  } catch (error) {
    if (error instanceof ApiError) return { error };
    throw error;
  }
}

export interface WebSocketClient {
  socket: ApiSocket;
  frames: Uint8Array[];
  closed?: { code?: number };
  ended: Promise<void>;
  /** What came on `channel`, as text. */
  on(channel: number): string;
  /** Sends one client message: the channel byte, then the payload. */
  send(channel: number, payload: string | number[]): void;
}

/** Opens the session on a recording socket and lets the start delay pass. */
export function openWebSocket(session: WebSocketSession, clock: FakeClock): WebSocketClient {
  let markEnded: () => void = () => undefined;
  const client: WebSocketClient = {
    frames: [],
    ended: new Promise<void>((resolve) => (markEnded = resolve)),
    socket: {
      send(data) {
        client.frames.push(data.slice());
        return data.length;
      },
      sendText(text) {
        throw new Error(`attach sends binary messages only, not text: ${text}`);
      },
      close(code) {
        client.closed = { code };
        session.close(client.socket, code ?? 1005, "");
        markEnded();
      },
    },
    on: (channel) => client.frames.filter((frame) => frame[0] === channel).map((frame) => new TextDecoder().decode(frame.subarray(1))).join(""),
    send: (channel, payload) => session.message(client.socket, new Uint8Array([channel, ...(typeof payload === "string" ? new TextEncoder().encode(payload) : payload)])),
  };
  session.open(client.socket);
  clock.step(WEBSOCKET_START_DELAY_MS);
  return client;
}

/** A SPDY stream as the session sees it: what the client sends is pushed, what the server writes kept. */
export class FakeSpdyStream extends Duplex {
  written = "";
  ended = false;
  constructor(readonly headers: Record<string, string>) {
    super();
  }
  respond(_status: number, _headers: Record<string, string>, written?: (error: Error | null) => void): void {
    written?.(null);
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.written += chunk.toString();
    done();
  }
  override _final(done: () => void): void {
    this.ended = true;
    done();
  }
}

/** A fake SPDY connection for `session`: `open` a stream as spdystream would; `ended` once the session let go. */
export function openSpdy(session: SpdySession) {
  let onStream: (stream: SpdyStream) => void = () => undefined;
  const onClose: (() => void)[] = [];
  let markEnded: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  const connection: SpdyConnection = {
    onStream: (handler) => (onStream = handler),
    onClose: (handler) => void onClose.push(handler),
    finish: () => markEnded(),
    end: () => markEnded(),
  };
  session.open(connection);
  return {
    ended,
    open(type: string): FakeSpdyStream {
      const stream = new FakeSpdyStream({ streamtype: type });
      onStream(stream as unknown as SpdyStream);
      return stream;
    },
    clientGone: () => onClose.forEach((handler) => handler()),
  };
}
