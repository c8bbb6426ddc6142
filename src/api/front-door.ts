/**
 * The API's public TLS listener. Bun.serve upgrades only to WebSocket, and Bun 1.3's node:http
 * drops what is written on an upgraded socket, so nothing in Bun can answer kubectl 1.27-1.29's
 * `Upgrade: SPDY/3.1`. This listener reads the first request head of each connection: a SPDY
 * upgrade is handed to `spdy` with the raw socket; every other connection is piped, bytes as they
 * came, to the Bun.serve behind it on a private Unix socket, which serves them as before.
 * spdystream dials a fresh connection for each upgrade, so only first requests need looking at.
 */
import { STATUS_CODES } from "node:http";
import { connect } from "node:net";
import { createServer, type TLSSocket } from "node:tls";
import type { Duplex } from "node:stream";
import { discard } from "./spdy.ts";

/** Bun.serve's own bound on a request line plus headers: past it the head is passed on as is. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from("\r\n\r\n");
/** A connection that sends no whole head in this time is closed (Bun.serve's idle bound, as before). */
const HEAD_TIMEOUT_MS = 60_000;

export interface FrontDoorOptions {
  hostname: string;
  port: number;
  tls: { cert: string; key: string };
  /** The Unix socket the Bun.serve listens on. */
  inner: string;
  /**
   * A first request asking `Upgrade: SPDY/3.1`; `rest` is what the client sent after its head.
   * Resolves to the answer to write (and close) when the connection was not taken over.
   */
  spdy(request: Request, socket: Duplex, rest: Buffer): Promise<Response | undefined>;
}

export interface FrontDoor {
  hostname: string;
  port: number;
  close(): void;
}

/** Listens now; throws when the address cannot be had (in use, not ours), as Bun.serve does. */
export function openFrontDoor(options: FrontDoorOptions): FrontDoor {
  const open = new Set<Duplex>();
  const server = createServer({ cert: options.tls.cert, key: options.tls.key, ALPNProtocols: ["http/1.1"] }, (socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => discard(socket));
    readHead(socket, (head, buffered) => {
      const request = head === undefined ? undefined : spdyUpgrade(head);
      if (!request) return pipeToInner(socket, buffered, options.inner, open);
      void options.spdy(request, socket, buffered.subarray(head!.length)).then(
        (refused) => refused && writeResponse(socket, refused),
        () => discard(socket),
      );
    });
  });
  server.on("error", () => {});
  // Bun binds before listen() returns: no address means it failed (the error event comes later).
  server.listen(options.port, options.hostname);
  const address = server.address() as { address: string; port: number } | null;
  if (!address) {
    server.close();
    // node:tls reports why only in its later error event; Bun.listen throws the errno (EADDRINUSE...) now.
    Bun.listen({ hostname: options.hostname, port: options.port, socket: { data() {} } }).stop(true);
    throw new Error(`cannot listen on ${options.hostname}:${options.port}`);
  }
  return {
    hostname: address.address,
    port: address.port,
    close() {
      server.close();
      for (const socket of open) discard(socket);
    },
  };
}

/** Calls back with the head (through its blank line) and every byte read, or no head past the bound. */
function readHead(socket: TLSSocket, then: (head: Buffer | undefined, buffered: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  socket.setTimeout(HEAD_TIMEOUT_MS, () => discard(socket));
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(HEAD_END);
    if (end === -1 && buffered.length <= MAX_HEAD_BYTES) return;
    socket.off("data", onData);
    socket.pause();
    socket.setTimeout(0);
    then(end === -1 ? undefined : buffered.subarray(0, end + HEAD_END.length), buffered);
  };
  socket.on("data", onData);
}

/** The head as a Request when it asks for SPDY/3.1 (kubectl's exec before 1.30), else undefined. */
function spdyUpgrade(head: Buffer): Request | undefined {
  const [requestLine = "", ...lines] = head.toString("latin1").split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      return undefined;
    }
  }
  if ((headers.get("upgrade") ?? "").toLowerCase() !== "spdy/3.1") return undefined;
  const [method, target] = requestLine.split(" ");
  if (!method || !target?.startsWith("/")) return undefined;
  try {
    return new Request(`https://${headers.get("host") ?? "localhost"}${target}`, { method, headers });
  } catch {
    return undefined;
  }
}

function pipeToInner(socket: TLSSocket, buffered: Buffer, inner: string, open: Set<Duplex>): void {
  const upstream = connect(inner);
  open.add(upstream);
  // Each side's end is passed on by pipe(); an error or the client leaving ends both at once.
  upstream.on("close", () => open.delete(upstream));
  upstream.on("error", () => discard(socket));
  socket.on("close", () => discard(upstream));
  upstream.write(buffered);
  socket.pipe(upstream);
  upstream.pipe(socket);
  socket.resume();
}

/** A refusal (a small Status) written as HTTP/1.1 by hand, and the connection closed after it. */
async function writeResponse(socket: TLSSocket, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const head = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? "Status"}`];
  response.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "connection") head.push(`${name}: ${value}`);
  });
  head.push(`Content-Length: ${body.length}`, "Connection: close", "", "");
  // The socket was paused to read the head: left so, it never reads the client's close and stays
  // half-open (CLOSE_WAIT), which Bun 1.3 spins a core on. Flowing, what the client sends after the
  // refusal is dropped and its end closes the socket; one that never leaves is cut.
  socket.resume();
  socket.setTimeout(HEAD_TIMEOUT_MS, () => discard(socket));
  socket.end(Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), body]));
}
