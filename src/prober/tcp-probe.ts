/**
 * tcpSocket probes, like the kubelet's pkg/probe/tcp: success when a TCP connection opens within
 * the timeout; the connection is closed at once.
 */
import net from "node:net";
import type { Clock } from "../clock.ts";
import { dialErrorMessage, joinHostPort, type ProbeResult } from "./probe-result.ts";

/**
 * Opens (and closes) a TCP connection to `host:port`. Never rejects: a refused or slow connect is a
 * failed probe worded as Go's dialer words it. The timeout is armed on `clock`.
 */
export function tcpProbe(clock: Clock, host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  const address = joinHostPort(host, port);
  return new Promise((resolve) => {
    let settled = false;
    const socket = net.connect({ host, port });
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      socket.destroy();
      resolve(result);
    };
    const cancelTimer = clock.setTimeout(() => finish({ ok: false, message: `dial tcp ${address}: i/o timeout` }), timeoutMs);
    socket.once("connect", () => finish({ ok: true, message: "" }));
    socket.once("error", (error) => finish({ ok: false, message: dialErrorMessage(address, error) }));
  });
}
