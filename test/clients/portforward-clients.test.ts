/**
 * Port-forward from the client libraries against the compiled agent (process runtime, so the pod's
 * servers listen on the host's loopback): Debian's python3-kubernetes (portforward-python.py) and
 * npm's @kubernetes/client-node under Node (portforward-node.mjs), both on the WebSocket channel
 * protocol. Each fetches its pod's HTTP answer, sees a port nothing listens on reported in the
 * kubelet's words, and makes ROUNDS forwards in turn and PARALLEL at once (as many as the agent
 * lets be open: the sessions before must have freed their slots); after each library, no
 * connection to the pod or to the API is left, nor a socket of the agent's. Without python's
 * library its part is skipped, or fails under CI=true (scripts/test installs it with apt).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readlinkSync } from "node:fs";
import { DEFAULT_LIMITS } from "../../src/api/http/context.ts";
import { Agent, freePort, waitFor, Workspace } from "../e2e/helpers.ts";
import { startAgentWithApi, type KubectlSession } from "../kubectl/harness.ts";
import { httpGet, tcpConnections } from "../kubectl/port-forward-helpers.ts";
import { describeWithPythonClient, PYTHON, runClientScript, stepOf, type Step } from "./client-script.ts";

const ROUNDS = 20;
const PARALLEL = DEFAULT_LIMITS.maxPortForwardSessions;
/** The agent's pod name for manifest `web` under `--node n1` (the e2e Agent's node). */
const POD = "web-n1";

let ws: Workspace;
let agent: Agent;
let session: KubectlSession;
let apiPort: number;
let podUid: string;
const ports = { a: 0, b: 0, dead: 0 };

/** A container answering every GET with `name`, threaded so that forwards at once are served at once. */
function server(name: string, port: number) {
  const script = [
    "import http.server as h",
    `h.ThreadingHTTPServer(('127.0.0.1', ${port}), type('H', (h.BaseHTTPRequestHandler,), {'do_GET': lambda s: (s.send_response(200), s.end_headers(), s.wfile.write(b'${name}')), 'log_message': lambda *a: None})).serve_forever()`,
  ].join("\n");
  return { name, image: "busybox", command: [PYTHON, "-c", script] };
}

beforeAll(async () => {
  ws = new Workspace();
  for (const name of ["a", "b", "dead"] as const) ports[name] = await freePort();
  const manifest = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { terminationGracePeriodSeconds: 1, containers: [server("a", ports.a), server("b", ports.b)] } };
  ws.write("web.json", JSON.stringify(manifest));
  let url: string;
  ({ agent, session, url } = await startAgentWithApi(ws, ["--stop-pods-on-exit"]));
  apiPort = Number(new URL(url).port);
  for (const name of ["a", "b"] as const) {
    await waitFor(`server ${name} answering`, async () => (await httpGet("127.0.0.1", ports[name], "/", 1_000).catch(() => "")) === name, 30_000, () => agent.stderr);
  }
  // The process runtime's sandbox is named by the pod's uid, which the kubelet's error names.
  podUid = JSON.parse(ws.cli("get", "pods", POD, "-o", "json")).metadata.uid;
}, 60_000);

afterAll(async () => {
  await agent?.terminate();
  session?.[Symbol.dispose]();
  ws?.cleanup();
}, 30_000);

/** The agent's open sockets (its /proc fd table): what a forward must give back. */
function agentSockets(): number {
  const dir = `/proc/${agent.pid}/fd`;
  return readdirSync(dir).filter((fd) => {
    try {
      return readlinkSync(`${dir}/${fd}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
}

/** What forwards may leave open: connections to the pod's ports and to the API, and the agent's sockets over its baseline. */
function leftOpen(baseline: number) {
  return {
    toPod: tcpConnections({ remote: ["127.0.0.1", ports.a] }) + tcpConnections({ remote: ["127.0.0.1", ports.b] }),
    toApi: tcpConnections({ local: ["127.0.0.1", apiPort] }),
    agentSockets: agentSockets() - baseline,
  };
}

async function nothingLeftOpen(baseline: number): Promise<void> {
  await waitFor("no connection or socket left by the forwards", () => Object.values(leftOpen(baseline)).every((count) => count === 0) || undefined, 10_000, () => JSON.stringify(leftOpen(baseline)));
}

/** Runs a client script to its end; its steps by name. */
function runClient(command: string[]): Promise<Map<string, Step>> {
  return runClientScript([...command, session.kubeconfig, "default", POD, String(ports.a), String(ports.b), String(ports.dead), String(ROUNDS), String(PARALLEL)]);
}

const refusedMessage = () => `error forwarding port ${ports.dead} to pod ${podUid}, uid : dial tcp4 127.0.0.1:${ports.dead}: connect: connection refused`;
const inTurn = Array.from({ length: ROUNDS }, () => "a");
const atOnce = Array.from({ length: PARALLEL }, (_, i) => (i % 2 ? "b" : "a"));

describeWithPythonClient("python3-kubernetes's portforward", () => {
  let steps: Map<string, Step>;
  let baseline: number;
  beforeAll(async () => {
    baseline = agentSockets();
    steps = await runClient([PYTHON, new URL("./portforward-python.py", import.meta.url).pathname]);
  }, 120_000);

  test("one port: the pod's answer through the forward's socket, and no error", () => {
    expect(stepOf(steps, "single")).toMatchObject({ status: "HTTP/1.0 200 OK", body: "a", portError: null });
  });

  test("two ports in one forward (ports=A,B): each answered by its own container", () => {
    expect(stepOf(steps, "two-ports")).toMatchObject({ a: "a", b: "b", portErrors: [null, null] });
  });

  test("a port nothing listens on: the library reports the kubelet's error for it, and its socket ends", () => {
    expect(stepOf(steps, "dead")).toEqual({ step: "dead", answer: "", portError: refusedMessage() });
  });

  test(`${ROUNDS} forwards in turn and ${PARALLEL} at once all answer, and leave nothing open`, async () => {
    expect((stepOf(steps, "sequential") as Step & { bodies: string[] }).bodies).toEqual(inTurn);
    expect((stepOf(steps, "concurrent") as Step & { bodies: string[] }).bodies).toEqual(atOnce);
    await nothingLeftOpen(baseline);
  }, 20_000);
});

describe("client-node's PortForward under Node", () => {
  let steps: Map<string, Step>;
  let baseline: number;
  beforeAll(async () => {
    baseline = agentSockets();
    // Node itself, not Bun: the library as its users run it.
    steps = await runClient(["node", new URL("./portforward-node.mjs", import.meta.url).pathname]);
  }, 120_000);

  test("one port: the pod's answer on the output stream, nothing on the error stream, and the WebSocket closed normally once the pod closed", () => {
    expect(stepOf(steps, "single")).toMatchObject({ status: "HTTP/1.0 200 OK", body: "a", errors: "", closeCode: 1000 });
  });

  test("a port nothing listens on: the kubelet's error on the error stream", () => {
    expect(stepOf(steps, "dead")).toMatchObject({ body: "", errors: refusedMessage(), closeCode: 1000 });
  });

  test(`${ROUNDS} forwards in turn and ${PARALLEL} at once all answer, and leave nothing open`, async () => {
    expect((stepOf(steps, "sequential") as Step & { bodies: string[] }).bodies).toEqual(inTurn);
    expect((stepOf(steps, "concurrent") as Step & { bodies: string[] }).bodies).toEqual(atOnce);
    await nothingLeftOpen(baseline);
  }, 20_000);
});
