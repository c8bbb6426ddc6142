/**
 * The runtime's side of a session (src/api/streaming/stream-run.ts) alone, with a target the test drives:
 * what reaches the remote side, and in what order.
 */
import { expect, test } from "bun:test";
import { StreamRun, type StreamTarget } from "../../src/api/streaming/stream-run.ts";
import type { TerminalSize } from "../../src/runtime/runtime.ts";

const flags = { stdin: true, stdout: true, stderr: false, tty: true };
const output = { send: () => true, finish: () => undefined, abort: () => undefined };
/** Lets every pending promise callback run (a turn of the event loop, no timer). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("resizes reach the remote side one after another, in the order the client sent them (kubectl attach sends its size + 1, then its size)", async () => {
  const calls: { size: TerminalSize; done: () => void }[] = [];
  const target: StreamTarget = {
    write: () => undefined,
    closeStdin: () => undefined,
    resize: (size) => new Promise<void>((done) => void calls.push({ size, done })),
    status: new Promise<string>(() => undefined),
  };
  const run = new StreamRun({ flags, onEnd: () => undefined, start: async () => target });
  run.start(output);
  await settle();
  run.resize({ width: 101, height: 31 });
  run.resize({ width: 100, height: 30 });
  await settle();
  // The second waits for the first: two engine calls in flight could land in either order.
  expect(calls.map((call) => call.size)).toEqual([{ width: 101, height: 31 }]);
  calls[0]!.done();
  await settle();
  expect(calls.map((call) => call.size)).toEqual([{ width: 101, height: 31 }, { width: 100, height: 30 }]);
});

test("a resize that fails does not hold back the next", async () => {
  const sizes: TerminalSize[] = [];
  const target: StreamTarget = {
    write: () => undefined,
    closeStdin: () => undefined,
    resize: async (size) => {
      sizes.push(size);
      if (size.width === 1) throw new Error("the engine refused");
    },
    status: new Promise<string>(() => undefined),
  };
  const run = new StreamRun({ flags, onEnd: () => undefined, start: async () => target });
  run.start(output);
  await settle();
  run.resize({ width: 1, height: 1 });
  run.resize({ width: 80, height: 24 });
  await settle();
  expect(sizes).toEqual([{ width: 1, height: 1 }, { width: 80, height: 24 }]);
});
