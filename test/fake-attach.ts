/**
 * The fake runtime's `kubectl attach` (FakeRuntime.attaches): what each attach asked, hands to
 * drive it, and the engine's stdin rules (stdinOnce without a terminal closes the container's stdin
 * and the attach lasts until the container exits; any other end of stdin detaches).
 */
import type { AttachRequest, AttachSession, AttachSupport, ContainerConfig, TerminalSize } from "../src/runtime/runtime.ts";

/** One attach as a test scripts it. */
export interface FakeAttach {
  containerId: string;
  container: ContainerConfig;
  request: AttachRequest;
  /** Everything written to the container's stdin so far. */
  input: string;
  /** The client's stdin ended. */
  stdinClosed: boolean;
  /** The container's own stdin was closed by it (stdinOnce). */
  containerStdinClosed: boolean;
  sizes: TerminalSize[];
  /** Called on each write and on the end of stdin. */
  onInput?: (attach: FakeAttach) => void;
  stdout(text: string): Promise<void>;
  stderr(text: string): Promise<void>;
  /** Ends the session (the container exited, or the engine ended the attach); later calls are ignored. */
  end(): void;
  ended: boolean;
  /** Ended by the request's signal: the client left. */
  detached: boolean;
}

/** The attaches of one FakeRuntime: seeded through `support` and `script`, read through `opened`. */
export class FakeAttaches {
  /** Every attach opened, in order. */
  readonly opened: FakeAttach[] = [];
  /** What attachSupport answers; default: everything is served. */
  support: (request: { stdin: boolean; tty: boolean }) => AttachSupport = () => ({ kind: "streams" });
  /** Scripts each attach; the default echoes stdin to stdout. */
  script: (attach: FakeAttach) => void = (attach) => {
    attach.onInput = (self) => {
      if (self.input) void self.stdout(self.input);
      self.input = "";
    };
  };

  open(containerId: string, container: ContainerConfig, request: AttachRequest): AttachSession {
    let settle: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (settle = resolve));
    const encoder = new TextEncoder();
    const attach: FakeAttach = {
      containerId,
      container,
      request,
      input: "",
      stdinClosed: !request.stdin,
      containerStdinClosed: false,
      sizes: request.size ? [request.size] : [],
      ended: false,
      detached: false,
      stdout: async (text) => void (await request.output("stdout", encoder.encode(text))),
      stderr: async (text) => void (await request.output(request.tty ? "stdout" : "stderr", encoder.encode(text))),
      end: () => {
        if (attach.ended) return;
        attach.ended = true;
        settle();
      },
    };
    request.signal?.addEventListener(
      "abort",
      () => {
        if (!attach.ended) attach.detached = true;
        attach.end();
      },
      { once: true },
    );
    this.opened.push(attach);
    this.script(attach);
    const decoder = new TextDecoder();
    return {
      write: (data) => {
        if (attach.ended || attach.stdinClosed) return;
        attach.input += decoder.decode(data);
        attach.onInput?.(attach);
      },
      closeStdin: () => {
        if (attach.ended || attach.stdinClosed) return;
        attach.stdinClosed = true;
        attach.onInput?.(attach);
        if (container.container.stdinOnce && !request.tty) attach.containerStdinClosed = true;
        else attach.end();
      },
      resize: async (size) => void attach.sizes.push(size),
      ended,
    };
  }

  /** The container exited: its attaches' output ends. */
  exited(containerId: string): void {
    for (const attach of this.opened) if (attach.containerId === containerId) attach.end();
  }
}
