/**
 * What the `kubectl port-forward` tests share: a running kubectl port-forward (its local ports
 * read from its "Forwarding from" lines), one HTTP/1.0 request per fresh TCP connection (so N
 * requests are N forwarded connections, never a reused one), and counts of the TCP connections
 * left open, read from /proc/net/tcp.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { waitFor } from "../e2e/helpers.ts";
import type { KubectlSession } from "./harness.ts";

/** One `kubectl port-forward POD :R1 :R2 ...` (kubectl picks the local ports), running until killed. */
export class PortForward {
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  private constructor(session: KubectlSession, kubectl: string, pod: string, remotePorts: number[]) {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TZ: "UTC", NO_COLOR: "1" };
    const args = ["--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "port-forward", pod, ...remotePorts.map((port) => `:${port}`)];
    this.child = spawn(kubectl, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk) => (this.stdout += String(chunk)));
    this.child.stderr!.on("data", (chunk) => (this.stderr += String(chunk)));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** Starts kubectl and resolves once it listens for every port (or fails with what it printed). */
  static async start(session: KubectlSession, kubectl: string, pod: string, remotePorts: number[]): Promise<PortForward> {
    const forward = new PortForward(session, kubectl, pod, remotePorts);
    await waitFor(
      `kubectl port-forward listening for ${remotePorts.join(", ")}`,
      () => remotePorts.every((port) => forward.localPortOrUndefined(port) !== undefined) || forward.child.exitCode !== null,
      20_000,
      () => forward.stdout + forward.stderr,
    );
    if (forward.child.exitCode !== null) throw new Error(`kubectl port-forward exited ${forward.child.exitCode}: ${forward.stdout}${forward.stderr}`);
    return forward;
  }

  /** The local port kubectl forwards to the pod's `remote` port. */
  local(remote: number): number {
    const port = this.localPortOrUndefined(remote);
    if (port === undefined) throw new Error(`kubectl forwards no local port to ${remote}: ${this.stdout}`);
    return port;
  }

  /** "Handling connection for L" lines so far: the connections kubectl accepted. */
  handled(): number {
    return this.stdout.split("\n").filter((line) => line.startsWith("Handling connection for ")).length;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** kill -9, as a user's Ctrl-\ or a dying terminal would; resolves once it is reaped. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  private localPortOrUndefined(remote: number): number | undefined {
    const match = new RegExp(`^Forwarding from 127\\.0\\.0\\.1:(\\d+) -> ${remote}$`, "m").exec(this.stdout);
    return match ? Number(match[1]) : undefined;
  }
}

/**
 * `GET path` as HTTP/1.0 on a new connection to host:port; resolves with the body once the server
 * closes ("" when it closes without an answer, as a failed forward does).
 */
export function httpGet(host: string, port: number, path: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`GET ${path} on ${host}:${port}: no answer in ${timeoutMs} ms (got ${JSON.stringify(received)})`));
    }, timeoutMs);
    socket.on("connect", () => socket.write(`GET ${path} HTTP/1.0\r\n\r\n`));
    socket.on("data", (chunk) => (received += String(chunk)));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const blank = received.indexOf("\r\n\r\n");
      resolve(blank === -1 ? "" : received.slice(blank + 4));
    });
  });
}

/** A connection to 127.0.0.1:port held open with nothing sent; resolves once connected. */
export function holdConnection(port: number): Promise<{ close(): void }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.on("connect", () => resolve({ close: () => socket.destroy() }));
  });
}

/** TCP states in /proc/net/tcp that hold no socket of anyone's: TIME_WAIT (06) and LISTEN (0A); every other state does. */
const NOT_HELD = new Set(["06", "0A"]);

/** An IPv4 address and port as /proc/net/tcp writes them: `0100007F:1F90` for 127.0.0.1:8080. */
function procAddress(host: string, port: number): string {
  const ip = host.split(".").map((part) => Number(part).toString(16).toUpperCase().padStart(2, "0")).reverse().join("");
  return `${ip}:${port.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Sockets in this host's network namespace (TIME_WAIT aside) with `local` or `remote` host:port:
 * `{ remote }` counts the connections dialled to a pod's port, `{ local }` those a server accepted.
 */
export function tcpConnections(match: { local?: [string, number]; remote?: [string, number] }): number {
  const local = match.local && procAddress(...match.local);
  const remote = match.remote && procAddress(...match.remote);
  const lines = readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1);
  return lines.filter((line) => {
    const [, localAddress, remoteAddress, state] = line.trim().split(/\s+/);
    if (state === undefined || NOT_HELD.has(state)) return false;
    return (!local || localAddress === local) && (!remote || remoteAddress === remote);
  }).length;
}
