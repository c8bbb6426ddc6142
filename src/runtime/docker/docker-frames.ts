/**
 * Docker's multiplexed stream format (logs and exec of a container without a TTY): frames of an
 * 8-byte header (stream type, 3 zero bytes, big-endian payload length) followed by the payload.
 */
import { StringDecoder } from "node:string_decoder";

/** 1 is stdout, 2 is stderr; 0 (stdin) never appears in output. */
export type DockerStreamType = 0 | 1 | 2;

export interface DockerFrame {
  stream: DockerStreamType;
  payload: Buffer;
}

const HEADER = 8;

/**
 * Splits `buffer` into complete frames; `rest` holds the bytes of an incomplete trailing frame
 * (a chunk boundary may fall anywhere), to be prefixed to the next chunk.
 */
export function parseFrames(buffer: Buffer): { frames: DockerFrame[]; rest: Buffer; raw: boolean } {
  const frames: DockerFrame[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const type = buffer[offset] as number;
    if (type > 2) {
      // Not a multiplexed stream (a TTY container writes raw bytes): pass everything through.
      frames.push({ stream: 1, payload: buffer.subarray(offset) });
      return { frames, rest: Buffer.alloc(0), raw: true };
    }
    if (buffer.length - offset < HEADER) break;
    const size = buffer.readUInt32BE(offset + 4);
    if (buffer.length - offset - HEADER < size) break;
    frames.push({ stream: type as DockerStreamType, payload: buffer.subarray(offset + HEADER, offset + HEADER + size) });
    offset += HEADER + size;
  }
  return { frames, rest: buffer.subarray(offset), raw: false };
}

/**
 * Splits a multiplexed stream, chunk by chunk, into payloads in arrival order: a frame split
 * across chunks is held back until the rest comes; once the stream shows itself raw (a TTY),
 * every later chunk is raw too.
 */
class FrameSplitter {
  private rest: Buffer = Buffer.alloc(0);
  private raw = false;

  payloads(chunk: Buffer): Buffer[] {
    if (this.raw) return [chunk];
    const { frames, rest, raw } = parseFrames(this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk);
    this.rest = rest;
    this.raw = raw;
    return frames.map((frame) => frame.payload);
  }
}

/** Collects frames chunk by chunk into the combined output, keeping at most `limit` bytes. */
export class FrameCollector {
  private readonly splitter = new FrameSplitter();
  private parts: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  push(chunk: Buffer): void {
    for (const payload of this.splitter.payloads(chunk)) this.append(payload);
  }

  /** The combined stdout and stderr in arrival order, as text. */
  text(): string {
    return Buffer.concat(this.parts).toString("utf8");
  }

  private append(payload: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.truncated = this.truncated || payload.length > 0;
      return;
    }
    const kept = payload.length > room ? payload.subarray(0, room) : payload;
    if (kept.length < payload.length) this.truncated = true;
    this.parts.push(kept);
    this.size += kept.length;
  }
}

/** A live multiplexed stream (`logs -f`) to text as it arrives, a split UTF-8 character held back. */
export class FrameTextDecoder {
  private readonly splitter = new FrameSplitter();
  private readonly utf8 = new StringDecoder("utf8");

  write(chunk: Buffer): string {
    return this.splitter.payloads(chunk).map((payload) => this.utf8.write(payload)).join("");
  }
}
