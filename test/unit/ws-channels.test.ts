/**
 * The channel framing shared by exec and port-forward over WebSocket (wsstream conn.go): binary
 * messages carry the channel byte, base64 ones the character '0' + n and the payload in base64,
 * with conn.go's own examples; what the server skips.
 */
import { expect, test } from "bun:test";
import { base64ChannelFrame, channelFrame, decodeChannelMessage } from "../../src/api/streaming/ws-channels.ts";

const text = (value: string) => new TextEncoder().encode(value);

test("binary: the channel byte, then the payload, both ways", () => {
  expect([...channelFrame(1, "\n")]).toEqual([1, 10]);
  expect([...channelFrame(3, new Uint8Array([0x50, 0x00]))]).toEqual([3, 0x50, 0x00]);
  expect(decodeChannelMessage("binary", new Uint8Array([0, 102, 111, 111, 10]))).toEqual({ channel: 0, payload: text("foo\n") });
  expect(decodeChannelMessage("binary", new Uint8Array([7]))).toEqual({ channel: 7, payload: new Uint8Array() });
});

test("base64: conn.go's example session, '0' + channel then standard base64", () => {
  expect(decodeChannelMessage("base64", text("0Zm9vCg=="))).toEqual({ channel: 0, payload: text("foo\n") });
  expect(base64ChannelFrame(1, text("\n"))).toBe("1Cg==");
  expect(base64ChannelFrame(2, new Uint8Array([0x90, 0x1f]))).toBe("2kB8=");
  // Go's string('0'+n): channel 80 is the rune U+0080, as a text message sends it.
  expect(base64ChannelFrame(80, new Uint8Array()).codePointAt(0)).toBe(0x80);
});

test("skipped as the kubelet skips them: an empty message, a base64 payload Go's decoder refuses", () => {
  expect(decodeChannelMessage("binary", new Uint8Array())).toBeUndefined();
  expect(decodeChannelMessage("base64", new Uint8Array())).toBeUndefined();
  for (const bad of ["0Zm9vCg", "0Zm9v*g==", "0Zm=vCg==", "0Zm9vCg==="]) expect(decodeChannelMessage("base64", text(bad))).toBeUndefined();
  // Line breaks are ignored by Go's decoder, so by ours.
  expect(decodeChannelMessage("base64", text("0Zm9v\r\nCg=="))).toEqual({ channel: 0, payload: text("foo\n") });
});
