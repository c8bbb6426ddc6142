/**
 * The API's public TLS listener. Bun.serve upgrades only to WebSocket, and Bun 1.3's node:http
 * drops what is written on an upgraded socket, so nothing in Bun can answer kubectl 1.27-1.29's
 * `Upgrade: SPDY/3.1`. This listener reads the first request head of each connection: a SPDY
 * upgrade is handed to `spdy` with the raw socket; every other connection is piped, bytes as they
 * came, to the Bun.serve behind it on a private Unix socket, which serves them as before.
 * spdystream dials a fresh connection for each upgrade, so only first requests need looking at.
 *
 * It is also where a connection is bounded before any token is seen: at most `maxConnections` open
 * (one more is closed as it is accepted, before its handshake costs anything), a TLS handshake
 * deadline and a deadline for the first head, both counted from the accept, so a client that sends
 * a byte now and then is cut all the same. Each first head is passed on with the client's address
 * (`peer`), which the server behind it cannot see through its Unix socket.
 *
 * With `http2` it also offers HTTP/2 (ALPN `h2`, as the kubelet's server does): a connection whose
 * client chose it is served stream by stream (http2-streams.ts), under the same head deadline for
 * its first stream.
 *
 * With `clientCa` (the kubelet port of node mode) it also asks each client for a certificate; one
 * that verifies against that CA names its user (CN) and groups (O) in the same note on the first
 * head, as the kubelet's x509 authenticator reads them. A client without one is not refused here:
 * it may still carry a bearer token.
 */
import { STATUS_CODES } from "node:http";
import { connect } from "node:net";
import { createServer, type TLSSocket, type TlsOptions } from "node:tls";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Clock } from "../../clock.ts";
import { discard } from "./spdy.ts";
import { http2Streams, type Http2Serve } from "./http2-streams.ts";
import { certificateUser, type CertificateUser } from "./certificate-user.ts";

/** Bun.serve's own bound on a request line plus headers: past it the head is passed on as is. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from("\r\n\r\n");
/** After a refusal, how long a client that does not leave keeps its connection. */
const REFUSED_LINGER_MS = 60_000;

export interface FrontDoorOptions {
  hostname: string;
  port: number;
  tls: { cert: string; key: string };
  /** PEM of the CA whose client certificates name their user; none asks no client for one. */
  clientCa?: string;
  /** The Unix socket the Bun.serve listens on. */
  inner: string;
  clock: Clock;
  /** Connections open at once; one more is closed at accept. */
  maxConnections: number;
  /** From accept to the end of the TLS handshake. */
  tlsHandshakeTimeoutMs: number;
  /** From accept to the end of the first request head. */
  readHeaderTimeoutMs: number;
  /**
   * The headers each first head is passed on with: `header: SECRET ADDRESS`, and with a verified
   * client certificate `certificateHeader: SECRET JSON` (a CertificateUser), SECRET the server's.
   */
  peer: { header: string; certificateHeader: string; secret: string };
  /**
   * A first request asking `Upgrade: SPDY/3.1`; `rest` is what the client sent after its head.
   * Resolves to the answer to write (and close) when the connection was not taken over.
   */
  spdy(request: Request, socket: Duplex, rest: Buffer, peer: string, certificate: CertificateUser | undefined): Promise<Response | undefined>;
  /** Offer HTTP/2 too, serving each stream with `serve`; a connection with no stream open is closed after `idleMs`. */
  http2?: { serve: Http2Serve; idleMs: number };
}

export interface FrontDoor {
  hostname: string;
  port: number;
  /** Connections open now, for the tests and the bench. */
  openConnections(): number;
  close(): void;
}

/** A connection between its accept and the end of its first head: the deadlines it is under. */
interface Accepted {
  raw: Socket;
  tls?: TLSSocket;
  cancelHandshake: () => void;
  cancelHead: () => void;
}

/** Listens now; throws when the address cannot be had (in use, not ours), as Bun.serve does. */
export function openFrontDoor(options: FrontDoorOptions): FrontDoor {
  const open = new Set<Duplex>();
  const { clock } = options;
  let connections = 0;
  /** By the client's address and port: the secure socket Bun hands over is not the accepted one. */
  const accepting = new Map<string, Accepted>();
  const h2 = options.http2 && http2Streams(options.http2.serve, clock, options.http2.idleMs);
  const tls: TlsOptions = { cert: options.tls.cert, key: options.tls.key, ALPNProtocols: h2 ? ["h2", "http/1.1"] : ["http/1.1"] };
  // Asked, not required: the handshake succeeds without one, and the server behind decides.
  if (options.clientCa !== undefined) Object.assign(tls, { requestCert: true, rejectUnauthorized: false, ca: options.clientCa });
  const server = createServer(tls, (socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => discard(socket));
    const accepted = accepting.get(peerKey(socket));
    accepted?.cancelHandshake();
    if (accepted) accepted.tls = socket;
    if (h2 && socket.alpnProtocol === "h2") {
      const certificate = options.clientCa === undefined ? undefined : certificateUser(socket);
      return void h2.accept(socket, { peer: socket.remoteAddress ?? "", certificate, onFirstStream: () => accepted?.cancelHead() });
    }
    readHead(socket, (head, buffered) => {
      accepted?.cancelHead();
      const request = head === undefined ? undefined : spdyUpgrade(head);
      const certificate = options.clientCa === undefined ? undefined : certificateUser(socket);
      if (!request) return pipeToInner(socket, head === undefined ? buffered : withPeer(buffered, options.peer, socket.remoteAddress, certificate), options.inner, open);
      void options.spdy(request, socket, buffered.subarray(head!.length), socket.remoteAddress ?? "", certificate).then(
        (refused) => refused && writeResponse(socket, refused),
        () => discard(socket),
      );
    });
  });
  server.on("connection", (raw: Socket) => {
    // Closed before its handshake: past the bound a connection costs a descriptor for an instant only.
    if (connections >= options.maxConnections) return void raw.destroy();
    connections++;
    const key = peerKey(raw);
    const cut = () => {
      raw.destroy();
      if (entry.tls) discard(entry.tls);
    };
    const entry: Accepted = {
      raw,
      cancelHandshake: clock.setTimeout(cut, options.tlsHandshakeTimeoutMs),
      cancelHead: clock.setTimeout(cut, options.readHeaderTimeoutMs),
    };
    accepting.set(key, entry);
    raw.once("close", () => {
      connections--;
      entry.cancelHandshake();
      entry.cancelHead();
      if (accepting.get(key) === entry) accepting.delete(key);
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
    openConnections: () => connections,
    close() {
      server.close();
      h2?.close();
      for (const socket of open) discard(socket);
    },
  };
}

/** Calls back with the head (through its blank line) and every byte read, or no head past the bound. */
function readHead(socket: TLSSocket, then: (head: Buffer | undefined, buffered: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(HEAD_END);
    if (end === -1 && buffered.length <= MAX_HEAD_BYTES) return;
    socket.off("data", onData);
    socket.pause();
    then(end === -1 ? undefined : buffered.subarray(0, end + HEAD_END.length), buffered);
  };
  socket.on("data", onData);
}

function peerKey(socket: { remoteAddress?: string; remotePort?: number }): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

/** The head with the peer headers after its request line (the client's own copies, if any, fail the secret). */
function withPeer(buffered: Buffer, peer: FrontDoorOptions["peer"], address: string | undefined, certificate: CertificateUser | undefined): Buffer {
  const lineEnd = buffered.indexOf("\r\n");
  if (lineEnd === -1 || !address) return buffered;
  let notes = `${peer.header}: ${peer.secret} ${address}\r\n`;
  // JSON of a certificate's names is ASCII-safe only escaped: a CN may hold any character.
  if (certificate) notes += `${peer.certificateHeader}: ${peer.secret} ${encodeURIComponent(JSON.stringify(certificate))}\r\n`;
  return Buffer.concat([buffered.subarray(0, lineEnd + 2), Buffer.from(notes, "latin1"), buffered.subarray(lineEnd + 2)]);
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
  socket.setTimeout(REFUSED_LINGER_MS, () => discard(socket));
  socket.end(Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), body]));
}
