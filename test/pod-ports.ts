/**
 * Loopback listeners standing in for a pod's ports in the port-forward tests: each answers a
 * connection's first bytes with `name:bytes` (and closes, unless it holds the connection), counts
 * the connections open to it, and lets a test await a count, event by event, instead of polling.
 */
import { createServer, type Socket } from "node:net";

export interface PodPort {
  port: number;
  /** Connections open to it now. */
  open(): number;
  /** Resolves once `open()` is `count` (at once when it already is). */
  until(count: number): Promise<void>;
  close(): void;
}

export async function podPort(name: string, options: { hold?: boolean } = {}): Promise<PodPort> {
  const sockets = new Set<Socket>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const changed = () => {
    for (const waiter of waiters.filter((each) => each.count === sockets.size)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    changed();
    socket.on("close", () => {
      sockets.delete(socket);
      changed();
    });
    socket.on("error", () => {});
    socket.on("data", (chunk) => (options.hold ? socket.write(`${name}:${chunk}`) : socket.end(`${name}:${chunk}`)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    open: () => sockets.size,
    until: (count) => (sockets.size === count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
