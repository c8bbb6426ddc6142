/**
 * `kubectl port-forward` against the compiled agent, on both runtimes: kubectl 1.27 (SPDY) and
 * 1.33 (SPDY tunnelled in a WebSocket) forwarding two ports of a pod whose containers run busybox
 * httpd, many connections at once; a port nothing listens on; and what is left once kubectl is
 * killed (connections to the pod and to the API, session slots). The process runtime's pods listen
 * on the host's loopback, docker's on the pod IP.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/api/http/context.ts";
import { Agent, ensureBinary, freePort, waitFor, Workspace } from "../e2e/helpers.ts";
import { BUSYBOX, describeDocker } from "../docker/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";
import { holdConnection, httpGet, PortForward, tcpConnections } from "./port-forward-helpers.ts";

/** Bytes of the `big` file each server has, for a download that needs back-pressure all the way. */
const BIG = 20 * 1024 * 1024;

/** A container serving `who` (its own name) and `big` with busybox httpd on `port`, from a folder under `root`. */
function server(name: string, port: number, image: string, root: string): string {
  const dir = `${root}/www-${name}`;
  const big = `dd if=/dev/zero of=${dir}/big bs=1048576 count=${BIG / 1048576} 2>/dev/null`;
  const script = `mkdir -p ${dir} && echo ${name} > ${dir}/who && ${big} && exec busybox httpd -f -p ${port} -h ${dir}`;
  return `  - {name: ${name}, image: ${image}, command: [sh, -c, '${script}']}\n`;
}

function portForwardSuite(runtime: "process" | "docker", image: string): void {
  // A node of its own: a docker engine takes one agent per node name.
  const node = `pf-${runtime}`;
  const POD = `web-${node}`;
  let ws: Workspace;
  let agent: Agent;
  let apiPort: number;
  /** Where the pod's ports are reached from the host: loopback, or the docker pod's IP. */
  let podIP: string;
  const ports = { a: 0, b: 0, dead: 0 };

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    // Host ports for the process runtime (its pods share the host's network); any would do in docker's.
    for (const name of ["a", "b", "dead"] as const) ports[name] = await freePort();
    const root = runtime === "process" ? ws.path : "/tmp";
    const manifest = `apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n`;
    ws.write("web.yaml", manifest + server("a", ports.a, image, root) + server("b", ports.b, image, root));
    agent = new Agent(ws, ["--runtime", runtime, "--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node });
    const url = await waitFor("the API address in the run banner", () => /minikubelet: api +https:\/\/127\.0\.0\.1:(\d+)/.exec(agent.stderr)?.[1], 15_000, () => agent.stderr);
    apiPort = Number(url);
    podIP = await waitFor("the pod's IP", () => JSON.parse(ws.cli("get", "pods", POD, "-o", "json")).status?.podIP, 60_000);
    for (const name of ["a", "b"] as const) {
      await waitFor(`httpd ${name} answering`, async () => (await httpGet(podIP, ports[name], "/who", 1_000).catch(() => "")) === `${name}\n`, 60_000);
    }
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    ws?.cleanup();
  }, 30_000);

  /** What is still open of forwarded sessions: connections to the pod's ports, and kubectl's to the API. */
  const leftOpen = () => ({
    toPod: tcpConnections({ remote: [podIP, ports.a] }) + tcpConnections({ remote: [podIP, ports.b] }),
    toApi: tcpConnections({ local: ["127.0.0.1", apiPort] }),
  });

  const kubectls = { "1.27 over SPDY": KUBECTL.versions["1.27"], "1.33 over WebSocket": KUBECTL.versions["1.33"] };
  for (const [which, binary] of Object.entries(kubectls)) {
    describeWithKubectl(`kubectl port-forward (${which}) on the ${runtime} runtime`, binary, (kubectl) => {
      test("forwards two ports at once: 50 concurrent connections, each answered by its own port", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const forward = await PortForward.start(session, kubectl, POD, [ports.a, ports.b]);
        try {
          const names = Array.from({ length: 50 }, (_, i) => (i % 2 ? "b" : "a") as "a" | "b");
          const answers = await Promise.all(names.map((name) => httpGet("127.0.0.1", forward.local(ports[name]), "/who")));
          expect(answers).toEqual(names.map((name) => `${name}\n`));
          expect(forward.handled()).toBe(50);
        } finally {
          await forward.kill();
        }
      }, 60_000);

      test("a 20 MiB download on each port at once arrives whole", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const forward = await PortForward.start(session, kubectl, POD, [ports.a, ports.b]);
        try {
          const sizes = await Promise.all([ports.a, ports.b].map(async (port) => (await httpGet("127.0.0.1", forward.local(port), "/big", 30_000)).length));
          expect(sizes).toEqual([BIG, BIG]);
        } finally {
          await forward.kill();
        }
      }, 60_000);

      test("a forwarded port nothing listens on: kubectl prints the kubelet's error for it, after the other port answered", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const forward = await PortForward.start(session, kubectl, POD, [ports.a, ports.dead]);
        try {
          expect(await httpGet("127.0.0.1", forward.local(ports.a), "/who")).toBe("a\n");
          expect(await httpGet("127.0.0.1", forward.local(ports.dead), "/who")).toBe("");
          const sandbox = runtime === "process" ? JSON.parse(ws.cli("get", "pods", POD, "-o", "json")).metadata.uid : "[0-9a-f]{64}";
          const line = `an error occurred forwarding ${forward.local(ports.dead)} -> ${ports.dead}: error forwarding port ${ports.dead} to pod ${sandbox}, uid : dial tcp4 ${podIP}:${ports.dead}: connect: connection refused`;
          await waitFor("kubectl's error line", () => new RegExp(line.replaceAll(".", "\\.")).test(forward.stderr), 10_000, () => forward.stderr);
          // kubectl (since 1.23, kubernetes#103526) closes the connection at any error and exits: the agent's side is gone with it.
          expect(await forward.exited).toBe(1);
          expect(forward.stderr).toContain("error: lost connection to pod");
          await waitFor("nothing left open", () => Object.values(leftOpen()).every((count) => count === 0) || undefined, 10_000, () => JSON.stringify(leftOpen()));
        } finally {
          await forward.kill();
        }
      }, 60_000);

      test("kubectl killed with connections open: every connection to the pod and the API closes", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const forward = await PortForward.start(session, kubectl, POD, [ports.a, ports.b]);
        const held = await Promise.all(Array.from({ length: 10 }, (_, i) => holdConnection(forward.local(i % 2 ? ports.b : ports.a))));
        try {
          await waitFor("10 connections through to the pod", () => leftOpen().toPod === 10 || undefined, 15_000, () => JSON.stringify(leftOpen()));
          expect(leftOpen().toApi).toBeGreaterThan(0);
          await forward.kill();
          await waitFor("nothing left open", () => Object.values(leftOpen()).every((count) => count === 0) || undefined, 10_000, () => JSON.stringify(leftOpen()));
        } finally {
          for (const connection of held) connection.close();
        }
      }, 60_000);

      test(`each killed session frees its slot: ${DEFAULT_LIMITS.maxPortForwardSessions + 1} sessions in turn, one more than may be open at once, all start`, async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        for (let run = 0; run <= DEFAULT_LIMITS.maxPortForwardSessions; run++) {
          const forward = await PortForward.start(session, kubectl, POD, [ports.a]);
          expect(await httpGet("127.0.0.1", forward.local(ports.a), "/who")).toBe("a\n");
          await forward.kill();
        }
      }, 120_000);
    });
  }

  // Last, as it ends the agent: its stop must not wait on the sessions it served.
  test(`after its port-forward sessions the ${runtime} agent still stops in order`, async () => {
    expect(await agent.terminate(15_000)).toBe(0);
  }, 30_000);
}

portForwardSuite("process", "busybox");
describeDocker("kubectl port-forward, docker runtime", () => portForwardSuite("docker", BUSYBOX));
