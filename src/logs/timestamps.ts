/**
 * The kubelet's `timestamps=true` prefix: each line starts with the time it was written and a space,
 * in the kubelet's output format, RFC3339NanoFixed (UTC, always nine fraction digits; kuberuntime's
 * logs.go timeFormatOut), which is also what the docker engine writes.
 */

/** `nanos`: the nanoseconds past `ms` (0 to 999999), for a time known more finely than a Date holds it. */
export function rfc3339NanoFixed(ms: number, nanos = 0): string {
  const iso = new Date(ms).toISOString(); // 2025-01-01T00:00:00.120Z
  return `${iso.slice(0, 23)}${String(nanos).padStart(6, "0")}Z`;
}

/** Inserts a timestamp at the start of every line of a byte stream that arrives in chunks. */
export class TimestampPrefixer {
  private atLineStart = true;

  prefix(bytes: Uint8Array, writtenAt: number): Uint8Array {
    if (bytes.length === 0) return bytes;
    const stamp = Buffer.from(`${rfc3339NanoFixed(writtenAt)} `);
    const parts: Uint8Array[] = [];
    let from = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (this.atLineStart) {
        parts.push(bytes.subarray(from, i), stamp);
        from = i;
        this.atLineStart = false;
      }
      if (bytes[i] === 0x0a) this.atLineStart = true;
    }
    parts.push(bytes.subarray(from));
    return Buffer.concat(parts);
  }
}
