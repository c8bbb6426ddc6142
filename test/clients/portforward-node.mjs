/**
 * Port-forward through the agent with npm's @kubernetes/client-node under Node, as a user's script
 * does (PortForward.portForward: the WebSocket channel protocol, one port per WebSocket), printing
 * one JSON line per step for portforward-clients.test.ts: one port, a port nothing listens on,
 * then ROUNDS forwards one after another and PARALLEL at once.
 * Usage: node portforward-node.mjs KUBECONFIG NAMESPACE POD PORT_A PORT_B DEAD_PORT ROUNDS PARALLEL
 */
import { PassThrough, Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";

const [kubeconfig, namespace, pod, ...numbers] = process.argv.slice(2);
const [portA, portB, deadPort, rounds, parallel] = numbers.map(Number);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);

const report = (step, facts) => console.log(JSON.stringify({ step, ...facts }));

/** A Writable that keeps what it is given, as text. */
function collector() {
  const sink = { text: "" };
  sink.stream = new Writable({ write: (chunk, _encoding, done) => ((sink.text += String(chunk)), done()) });
  return sink;
}

/**
 * One GET through a new port-forward WebSocket: resolves with the answer once the agent closes the
 * WebSocket (the pod closed its connection) or the error stream spoke; the script closes nothing itself.
 */
async function forwardOnce(port) {
  const output = collector();
  const errors = collector();
  const input = new PassThrough();
  const socket = await new k8s.PortForward(kc).portForward(namespace, pod, [port], output.stream, errors.stream, input);
  const closed = new Promise((resolve) => socket.addEventListener("close", (event) => resolve(event.code)));
  input.write("GET / HTTP/1.0\r\nHost: pod\r\n\r\n");
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`no close in 20 s; got ${JSON.stringify(output.text)}`)), 20_000).unref());
  const code = await Promise.race([closed, timeout]);
  const [status, ...rest] = output.text.split("\r\n");
  return { status, body: rest.join("\r\n").split("\r\n\r\n").at(-1), errors: errors.text, closeCode: code };
}

async function attempt(step, action) {
  try {
    report(step, await action());
  } catch (error) {
    report(step, { error: { message: String(error?.message ?? error) } });
  }
}

await attempt("single", () => forwardOnce(portA));

await attempt("dead", () => forwardOnce(deadPort));

await attempt("sequential", async () => {
  const started = performance.now();
  const bodies = [];
  for (let i = 0; i < rounds; i++) bodies.push((await forwardOnce(portA)).body);
  return { bodies, seconds: Number(((performance.now() - started) / 1000).toFixed(3)) };
});

await attempt("concurrent", async () => {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: parallel }, (_, i) => forwardOnce(i % 2 ? portB : portA).then((answer) => answer.body, (error) => `error: ${error.message}`)));
  return { bodies: answers, seconds: Number(((performance.now() - started) / 1000).toFixed(3)) };
});

process.exit(0);
