/** One frame of the engine's multiplexed stream (logs, exec): stream 1 stdout or 2 stderr, the payload's length big-endian, the payload. */
export function engineFrame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}
