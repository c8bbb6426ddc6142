/**
 * What one probe run produced, and the Go wording the kubelet's probers put in their messages
 * (the text users see in `Unhealthy` events comes from Go's net and net/http errors).
 */

/**
 * The outcome of one probe run. `message` is what follows `Liveness probe failed: ` in the
 * kubelet's Unhealthy event (or `... probe warning: ` when `warning` is set).
 */
export interface ProbeResult {
  ok: boolean;
  message: string;
  /**
   * Success with a ProbeWarning event: an HTTP redirect the kubelet would not follow (to another
   * host) still counts as success, and the kubelet reports `Probe terminated redirects`.
   */
  warning?: boolean;
  /**
   * The probe could not be run at all (not a failed check): the kubelet emits
   * `X probe errored and resulted in failure state: ...` and throws the result away.
   */
  errored?: boolean;
}

/** Go's %q for the plain strings we quote (URLs, commands): JSON escaping is the same for ASCII. */
export function goQuote(text: string): string {
  return JSON.stringify(text);
}

/** `host:port` as net.JoinHostPort writes it (IPv6 literals in brackets). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * A failed connect in Go's words, e.g. `dial tcp 127.0.0.1:8080: connect: connection refused`.
 * Node reports errno codes; Go prints the errno's text after the failing syscall.
 */
export function dialErrorMessage(address: string, error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case "ECONNREFUSED":
      return `dial tcp ${address}: connect: connection refused`;
    case "EHOSTUNREACH":
      return `dial tcp ${address}: connect: no route to host`;
    case "ENETUNREACH":
      return `dial tcp ${address}: connect: network is unreachable`;
    case "EADDRNOTAVAIL":
      return `dial tcp ${address}: connect: cannot assign requested address`;
    case "ETIMEDOUT":
      return `dial tcp ${address}: i/o timeout`;
    case "ENOTFOUND":
    case "EAI_AGAIN": {
      const host = address.startsWith("[") ? address.slice(1, address.lastIndexOf("]")) : address.slice(0, address.lastIndexOf(":"));
      return `dial tcp: lookup ${host}: no such host`;
    }
    default:
      return `dial tcp ${address}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Node's connect-phase errors: the ones Go reports as a failed dial. */
export function isDialError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    typeof code === "string" &&
    ["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"].includes(code)
  );
}
