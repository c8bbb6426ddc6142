/**
 * A forwarded connection's TCP side: the dial to the pod's port, bounded in time, and its failures
 * in a Go dialer's words (`dial tcp4 127.0.0.1:81: connect: connection refused`). The kubelet's
 * runtimes dial with Go, and kubectl prints their error as it comes, so a user sees here what a
 * cluster would show.
 */
import { isIPv6 } from "node:net";
import type { Clock } from "../../clock.ts";
import { TcpDuplex } from "../streaming/tcp-duplex.ts";

/** Where a forwarded connection goes: what Runtime.portForwardAddress answers. */
export interface PodAddress {
  host: string;
  port: number;
}

/**
 * How long a dial may take. Go's dialer waits as long as the kernel does (minutes for an address
 * that drops SYNs); a forwarded connection that cannot be made in this time is reported instead.
 */
export const DIAL_TIMEOUT_MS = 10_000;

/** Go's wording of the errnos a dial, a read or a write meets (its syscall.Errno strings). */
const ERRNO_TEXT: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network is unreachable",
  ETIMEDOUT: "connection timed out",
  EADDRNOTAVAIL: "cannot assign requested address",
  EPIPE: "broken pipe",
};

/** The dial timed out (ours, not the kernel's ETIMEDOUT). */
export class DialTimeoutError extends Error {
  override readonly name = "DialTimeoutError";
  constructor(readonly address: PodAddress) {
    super(`dial ${describe(address)} timed out after ${DIAL_TIMEOUT_MS} ms`);
  }
}

/** Connects to `address`; rejects with the connect error, or a DialTimeoutError after DIAL_TIMEOUT_MS. */
export function dialPod(address: PodAddress, clock: Clock): Promise<TcpDuplex> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const cancel = clock.setTimeout(() => {
      timedOut = true;
      reject(new DialTimeoutError(address));
    }, DIAL_TIMEOUT_MS);
    TcpDuplex.connect(address.host, address.port).then(
      (socket) => {
        cancel();
        // Made after we gave up: nobody will use it.
        if (timedOut) return void socket.destroy();
        resolve(socket);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

/** A failed dial as Go's net.Dial reports it: `dial tcp4 HOST:PORT: connect: connection refused`. */
export function dialErrorMessage(address: PodAddress, error: unknown): string {
  if (error instanceof DialTimeoutError) return `dial ${network(address.host)} ${hostPort(address)}: i/o timeout`;
  return `dial ${network(address.host)} ${hostPort(address)}: connect: ${errnoText(error)}`;
}

/** A failed read or write on an established connection: `read tcp4 LOCAL->REMOTE: read: connection reset by peer`. */
export function transferErrorMessage(socket: Pick<TcpDuplex, "ends">, error: unknown): string {
  const op = (error as { syscall?: string }).syscall === "write" ? "write" : "read";
  const { localAddress, localPort, remoteAddress, remotePort } = socket.ends;
  const local = hostPort({ host: localAddress, port: localPort });
  const remote = hostPort({ host: remoteAddress, port: remotePort });
  return `${op} ${network(remoteAddress)} ${local}->${remote}: ${op}: ${errnoText(error)}`;
}

function errnoText(error: unknown): string {
  const code = (error as { code?: string })?.code;
  return (code && ERRNO_TEXT[code]) ?? (error instanceof Error ? error.message : String(error));
}

function network(host: string): string {
  return isIPv6(host) ? "tcp6" : "tcp4";
}

/** Go's JoinHostPort: an IPv6 host in brackets. */
function hostPort(address: PodAddress): string {
  return isIPv6(address.host) ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

function describe(address: PodAddress): string {
  return `${network(address.host)} ${hostPort(address)}`;
}
