/**
 * `kubectl attach` for the process runtime, as conmon serves CRI-O's: the container's monitor
 * holds its stdin (a pipe, with `stdin: true`) or its terminal (`tty: true`) and listens on a unix
 * socket in the container's directory; each attach is one connection there. The monitor keeps the
 * engine's stdin semantics: with `stdinOnce` and no terminal, the end of the first stdin attach
 * closes the container's stdin and that attach lasts until the container exits; otherwise the end
 * of the client's stdin ends the attach (a detach), and the container's stdin stays open.
 *
 * The socket speaks frames of `type (1 byte) length (4 bytes, big-endian) payload`, both ways:
 * - to the monitor: HELLO (first, payload one byte: 1 when this attach feeds stdin), STDIN (data),
 *   CLOSE_STDIN, RESIZE (columns and rows, two big-endian 16-bit numbers);
 * - from it: STDOUT and STDERR (what the container writes from now on) and EXIT (its main process
 *   ended and its output was drained; the connection closes after it).
 * An attach that needs neither stdin nor a terminal follows the log instead (attach-run.ts), which
 * works for every container, those of an earlier version's monitor too.
 */
import { closeSync, existsSync, openSync } from "node:fs";
import { join } from "node:path";
import type { AttachRequest, AttachSession, AttachSupport, TerminalSize } from "../runtime.ts";

/** The monitor's attach socket in a container's directory (monitor/minikubelet-monitor.c). */
export const ATTACH_SOCKET_NAME = "attach.sock";
/** sockaddr_un's sun_path, with its terminating NUL. */
const UNIX_PATH_BYTES = 108;

const enum Frame {
  Stdin = 0,
  CloseStdin = 1,
  Resize = 2,
  Hello = 3,
}
const enum Output {
  Stdout = 1,
  Stderr = 2,
  Exit = 3,
}

/** Neither stdin nor a terminal: the log is followed; else the monitor's socket serves the streams. */
export function processAttachSupport(request: { stdin: boolean; tty: boolean }): AttachSupport {
  return request.stdin || request.tty ? { kind: "streams" } : { kind: "output-log" };
}

function frame(type: Frame, payload: Uint8Array = new Uint8Array()): Uint8Array {
  const bytes = new Uint8Array(5 + payload.length);
  bytes[0] = type;
  new DataView(bytes.buffer).setUint32(1, payload.length);
  bytes.set(payload, 5);
  return bytes;
}

function resizeFrame(size: TerminalSize): Uint8Array {
  const payload = new Uint8Array(4);
  const view = new DataView(payload.buffer);
  view.setUint16(0, Math.min(size.width, 0xffff));
  view.setUint16(2, Math.min(size.height, 0xffff));
  return frame(Frame.Resize, payload);
}

/** Splits the monitor's byte stream into frames, across reads. */
class FrameReader {
  private pending = new Uint8Array();

  *frames(chunk: Uint8Array): Generator<{ type: number; payload: Uint8Array }> {
    const joined = new Uint8Array(this.pending.length + chunk.length);
    joined.set(this.pending);
    joined.set(chunk, this.pending.length);
    let at = 0;
    while (joined.length - at >= 5) {
      const length = new DataView(joined.buffer, joined.byteOffset + at + 1, 4).getUint32(0);
      if (joined.length - at - 5 < length) break;
      yield { type: joined[at] as number, payload: joined.slice(at + 5, at + 5 + length) };
      at += 5 + length;
    }
    this.pending = joined.slice(at);
  }
}

/**
 * Attaches to the container whose directory is `dir`. Rejects when its monitor serves no attach
 * (a container created without stdin and tty, or started by an earlier version's monitor).
 */
export async function attachProcessContainer(id: string, dir: string, request: AttachRequest): Promise<AttachSession> {
  const path = join(dir, ATTACH_SOCKET_NAME);
  if (!existsSync(path)) {
    throw new Error(`attach to container ${id}: its monitor holds no stdin or terminal (the container was created without stdin and tty, or by an earlier version of minikubelet)`);
  }
  const reader = new FrameReader();
  // What the socket did not take yet: Bun's write takes what fits and leaves the rest to drain.
  let unsent = new Uint8Array();
  let output = Promise.resolve();
  let gone = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const finish = () => {
    gone = true;
    resolveClosed();
  };
  // sun_path holds 108 bytes: a deeper socket is reached through its directory's descriptor, as the monitor bound it.
  const dirFd = Buffer.byteLength(path) >= UNIX_PATH_BYTES ? openSync(dir, "r") : undefined;
  const socket = await Bun.connect({
    unix: dirFd === undefined ? path : `/proc/self/fd/${dirFd}/${ATTACH_SOCKET_NAME}`,
    socket: {
      data(socket, chunk) {
        for (const { type, payload } of reader.frames(chunk)) {
          if (type === Output.Exit) socket.end();
          const stream = type === Output.Stdout ? "stdout" : type === Output.Stderr ? "stderr" : undefined;
          if (!stream) continue;
          // Output is handed on in order; a consumer that holds it back holds the socket back.
          output = output.then(() => request.output(stream, payload));
        }
      },
      drain(socket) {
        const written = socket.write(unsent);
        unsent = unsent.slice(Math.max(written, 0));
      },
      close() {
        finish();
      },
      error() {
        finish();
      },
    },
  })
    .catch((error: Error) => {
      throw new Error(`attach to container ${id}: ${error.message}`);
    })
    .finally(() => dirFd !== undefined && closeSync(dirFd));
  const send = (bytes: Uint8Array) => {
    if (gone) return;
    if (unsent.length === 0) {
      const written = socket.write(bytes);
      bytes = bytes.slice(Math.max(written, 0));
    }
    if (bytes.length === 0) return;
    const joined = new Uint8Array(unsent.length + bytes.length);
    joined.set(unsent);
    joined.set(bytes, unsent.length);
    unsent = joined;
  };
  send(frame(Frame.Hello, Uint8Array.of(request.stdin ? 1 : 0)));
  if (request.tty && request.size) send(resizeFrame(request.size));
  const detach = () => socket.end();
  if (request.signal?.aborted) detach();
  request.signal?.addEventListener("abort", detach, { once: true });
  const ended = closed.then(() => output).then(() => request.signal?.removeEventListener("abort", detach));
  return {
    write: (data) => {
      if (request.stdin && data.length > 0) send(frame(Frame.Stdin, data));
    },
    closeStdin: () => send(frame(Frame.CloseStdin)),
    resize: async (size) => {
      if (request.tty && size.width > 0 && size.height > 0) send(resizeFrame(size));
    },
    ended,
  };
}
