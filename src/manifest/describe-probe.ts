/**
 * A probe as one line, exactly as `kubectl describe pod` prints it (kubectl/pkg/describe,
 * DescribeProbe), so `validate`, our `describe` and the real kubectl can be compared by eye or diff:
 *
 *   http-get http://:http/index.html delay=1s timeout=1s period=1s #success=2 #failure=3
 *   exec [sh -c test -f /tmp/ready] delay=0s timeout=1s period=10s #success=1 #failure=3
 *   tcp-socket :8080 delay=0s timeout=1s period=10s #success=1 #failure=3
 *   grpc <pod>:5000  delay=0s timeout=1s period=10s #success=1 #failure=3
 *
 * kubectl 1.3x formats the timings as whole seconds (`%ds`), so 90 seconds prints as `period=90s`,
 * not as the Go duration `1m30s`; we print what kubectl prints.
 */
import type { LifecycleHandler, Probe, ProbeHandler } from "./types.ts";

export function describeProbe(probe: Probe): string {
  const attrs =
    `delay=${probe.initialDelaySeconds}s timeout=${probe.timeoutSeconds}s period=${probe.periodSeconds}s ` +
    `#success=${probe.successThreshold} #failure=${probe.failureThreshold}`;
  return `${describeHandler(probe.handler)} ${attrs}`;
}

/** The handler part alone (`http-get http://:8080/`, `exec [...]`, `sleep 5s`), as kubectl names it. */
export function describeHandler(handler: ProbeHandler | LifecycleHandler): string {
  switch (handler.type) {
    case "exec":
      // Go's %v of a []string: the elements space-separated inside brackets, unquoted.
      return `exec [${handler.command.join(" ")}]`;
    case "httpGet": {
      const port = handler.portName ?? String(handler.port);
      const host = joinHostPort(handler.host, port);
      const path = escapeGo(handler.path, "path");
      const slash = path !== "" && !path.startsWith("/") ? "/" : "";
      return `http-get ${handler.scheme.toLowerCase()}://${escapeGo(host, "host")}${slash}${path}`;
    }
    case "tcpSocket":
      return `tcp-socket ${handler.host}:${handler.portName ?? handler.port}`;
    case "grpc":
      // kubectl prints the service even when empty, leaving two spaces before the timings.
      return `grpc <pod>:${handler.port} ${handler.service}`;
    case "sleep":
      return `sleep ${handler.seconds}s`;
  }
}

/** Go's net.JoinHostPort: brackets around a host that contains a colon (IPv6). */
function joinHostPort(host: string, port: string): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;
const PATH_ALLOWED = new Set("$&+,/:;=@");
const HOST_ALLOWED = new Set("!$&'()*+,;=:[]<>\"");

/** Go's net/url escape() for the path and host of URL.String(): percent-encodes UTF-8 bytes. */
function escapeGo(text: string, mode: "path" | "host"): string {
  const allowed = mode === "path" ? PATH_ALLOWED : HOST_ALLOWED;
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && (UNRESERVED.test(char) || allowed.has(char))) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
