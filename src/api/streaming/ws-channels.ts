/**
 * The channel framing of Kubernetes' WebSocket subprotocols (apimachinery's util/httpstream/wsstream
 * conn.go), shared by exec (exec-protocol.ts) and port-forward (portforward-ws-session.ts): every
 * message, both ways, is one channel number and that channel's payload. The `channel.k8s.io`
 * family (`v4.channel.k8s.io` ...) sends binary messages, the channel byte then the bytes; the
 * `base64.channel.k8s.io` family sends text, the channel as the character `'0' + n` then the
 * payload in standard base64. Pure: bytes in, bytes out.
 */

export type ChannelCodec = "binary" | "base64";

/** A client's message, split: the channel it names and what it carries for it. */
export interface ChannelMessage {
  channel: number;
  payload: Uint8Array;
}

const ZERO = "0".charCodeAt(0);

/** One binary message: the channel byte, then the payload. */
export function channelFrame(channel: number, payload: Uint8Array | string): Uint8Array {
  const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const message = new Uint8Array(bytes.length + 1);
  message[0] = channel;
  message.set(bytes, 1);
  return message;
}

/**
 * One text message of the base64 family. Go writes the channel as `string('0'+n)`, a byte's sum
 * turned into a rune, so past channel 79 it is a non-ASCII character (and it wraps past 207), as here.
 */
export function base64ChannelFrame(channel: number, payload: Uint8Array): string {
  return String.fromCharCode((ZERO + channel) & 0xff) + Buffer.from(payload).toString("base64");
}

/**
 * A client's message as the server reads it, or undefined when the kubelet skips it: an empty
 * message, or (base64) one whose payload is not valid standard base64.
 */
export function decodeChannelMessage(codec: ChannelCodec, message: Uint8Array): ChannelMessage | undefined {
  if (message.length === 0) return undefined;
  const first = message[0] as number;
  if (codec === "binary") return { channel: first, payload: message.subarray(1) };
  const payload = decodeStdBase64(new TextDecoder().decode(message.subarray(1)));
  return payload && { channel: (first - ZERO) & 0xff, payload };
}

/** Go's base64.StdEncoding: padded, the standard alphabet, line breaks ignored; anything else is refused. */
function decodeStdBase64(text: string): Uint8Array | undefined {
  const compact = text.replace(/[\r\n]/g, "");
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, "base64");
}
