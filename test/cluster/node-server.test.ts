/**
 * Node mode's kubelet port, proved with the real API server (v1.37.2) and the compiled binary:
 * `kubectl logs`, `logs -f`, `exec`, `exec -i`, `attach` and `port-forward` of a pod bound to node
 * srv-1 reach the agent's runtime through the API server; the API server's kubelet client
 * certificate is let in, and anyone else is refused as the kubelet refuses (401 without an identity,
 * 403 with the kubelet's message for a user the cluster does not authorize).
 *
 * The test does not need the node to register itself or to keep mirror pods: the node creates its
 * Node with its own credentials unless it exists (InternalIP 127.0.0.1, the kubelet port), the
 * agent runs a static pod (`web-srv-1`), and the admin creates that pod's mirror bound to srv-1
 * unless it exists (Running, for port-forward), so the API server has a pod to proxy for.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeCluster, kubectl, nodeCredentials, type ClusterEnv } from "../cluster-fixtures.ts";
import { Agent, ensureBinary, freePort, killRecordedContainers, waitFor, Workspace } from "../e2e/helpers.ts";

const NODE = "srv-1";
const POD = `web-${NODE}`;
const NAMESPACE = "default";
const SERVICE_ACCOUNT = "srv-1-nobody";

describeCluster("node mode: the kubelet port serves the API server", (env) => {
  const pathKubectl = Bun.which("kubectl");
  const kubectlBins: [string, string][] = [["kubectl v1.37.2", join(env.bin, "kubectl")], ...(pathKubectl ? [["kubectl on PATH", pathKubectl] as [string, string]] : [])];
  let ws: Workspace;
  let agent: Agent;
  let kubeletPort: number;
  let pongPort: number;
  let credentials: ReturnType<typeof nodeCredentials>;
  const pki = (name: string) => readFileSync(join(env.dir, "pki", name), "utf8");

  beforeAll(async () => {
    ensureBinary();
    cleanUp(env);
    credentials = nodeCredentials(env, NODE);
    ws = new Workspace();
    [kubeletPort, pongPort] = [await freePort(), await freePort()];
    ws.write(
      "web.yaml",
      `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${NAMESPACE}}
spec:
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "echo started; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"]
  - name: pong
    image: busybox
    command: ["busybox", "nc", "-ll", "-p", "${pongPort}", "-e", "echo", "pong"]
`,
    );
    agent = new Agent(ws, ["--kubeconfig", credentials.kubeconfig, "--kubelet-listen", `127.0.0.1:${kubeletPort}`, "--tls-cert-file", credentials.cert, "--tls-private-key-file", credentials.key], { node: NODE });
    await agent.waitForOutput(`Started container pong`, 20_000);
    // Created here unless the node registered itself already; either way it must say where its kubelet port is.
    const node = {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: NODE, labels: { "kubernetes.io/hostname": NODE } },
      status: {
        addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
        daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "ready" }],
      },
    };
    createUnlessPresent(join(env.bin, "kubectl"), credentials.kubeconfig, node);
    kubectl(env, "patch", "node", NODE, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { addresses: node.status.addresses, daemonEndpoints: node.status.daemonEndpoints } }));
    // The static pod's mirror, as the kubelet writes it (the config hash in kubernetes.io/config.mirror):
    // a node that keeps mirror pods finds it current, and one that watches its pods does not run it again.
    const hash = (JSON.parse(ws.cli("get", "pods", POD, "-n", NAMESPACE, "-o", "json")) as { metadata: { annotations: Record<string, string> } }).metadata.annotations["kubernetes.io/config.hash"]!;
    const annotations = { "kubernetes.io/config.hash": hash, "kubernetes.io/config.mirror": hash, "kubernetes.io/config.source": "file" };
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: POD, namespace: NAMESPACE, annotations }, spec: { nodeName: NODE, containers: [{ name: "app", image: "busybox" }, { name: "pong", image: "busybox" }] } };
    createUnlessPresent(join(env.bin, "kubectl"), env.admin, pod);
    // kubectl port-forward asks for a Running pod; a node that reports status says so itself.
    kubectl(env, "patch", "pod", POD, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p", '{"status":{"phase":"Running"}}');
  }, 60_000);

  afterAll(async () => {
    await agent?.terminate();
    if (ws) killRecordedContainers(ws.path);
    ws?.cleanup();
    cleanUp(env);
  });

  for (const [which, bin] of kubectlBins) {
    test(`${which}: logs of the pod's container, and logs -f goes on as it writes`, async () => {
      const logs = run(bin, ["--kubeconfig", env.admin, "logs", POD, "-c", "app"]);
      expect(logs.stdout.split("\n").slice(0, 2)).toEqual(["started", "tick 1"]);
      const tail = run(bin, ["--kubeconfig", env.admin, "logs", POD, "-c", "app", "--tail", "1"]);
      expect(tail.stdout).toMatch(/^tick \d+\n$/);
      const last = Number(tail.stdout.trim().split(" ")[1]);
      // Two lines the container writes after the follow began: the stream stays open and carries them.
      const follow = spawn(bin, ["--kubeconfig", env.admin, "logs", "-f", POD, "-c", "app", "--tail", "0"], { stdio: ["ignore", "pipe", "pipe"] });
      let followed = "";
      follow.stdout!.on("data", (chunk) => (followed += String(chunk)));
      try {
        const ticks = await waitFor("two new lines through logs -f", () => (followed.match(/^tick \d+$/gm)?.length ?? 0) >= 2 && followed, 10_000, () => followed);
        expect(Number(ticks.match(/tick (\d+)/)![1])).toBeGreaterThan(last);
      } finally {
        follow.kill();
      }
    });

    test(`${which}: exec gives the command's output and its exit code`, () => {
      const result = run(bin, ["--kubeconfig", env.admin, "exec", POD, "-c", "app", "--", "sh", "-c", "echo hi; echo oops >&2; exit 3"]);
      expect(result.stdout).toBe("hi\n");
      expect(result.stderr).toContain("oops\n");
      expect(result.stderr).toContain("command terminated with exit code 3");
      expect(result.status).toBe(3);
    });

    test(`${which}: exec -i feeds stdin to the command`, () => {
      const result = run(bin, ["--kubeconfig", env.admin, "exec", "-i", POD, "-c", "app", "--", "sh", "-c", "tr a-z A-Z; echo done"], "hello stdin\n", true);
      expect(result.stdout).toBe("HELLO STDIN\ndone\n");
    });
  }

  test("logs read over a WebSocket through the API server (not followed) carry the log, as the conformance spec reads them", async () => {
    // The API server relays this answer whole only when the node speaks HTTP/2 to it, as the kubelet does.
    const url = `${env.server.replace(/^https/, "wss")}/api/v1/namespaces/${NAMESPACE}/pods/${POD}/log?container=app`;
    const socket = new WebSocket(url, { protocols: ["binary.k8s.io"], tls: { cert: pki("admin.crt"), key: pki("admin.key"), ca: pki("ca.crt") } } as unknown as string[]);
    socket.binaryType = "arraybuffer";
    const frames: string[] = [];
    socket.onmessage = (event) => frames.push(new TextDecoder().decode(event.data as ArrayBuffer));
    await new Promise<void>((closed, failed) => {
      socket.onclose = () => closed();
      socket.onerror = () => failed(new Error(`the WebSocket to ${url} failed`));
    });
    expect(frames.join("").split("\n").slice(0, 2)).toEqual(["started", "tick 1"]);
  });

  test("kubectl attach shows the container's output as it writes", async () => {
    const attach = spawn(join(env.bin, "kubectl"), ["--kubeconfig", env.admin, "attach", POD, "-c", "app"], { stdio: ["ignore", "pipe", "pipe"] });
    let seen = "";
    attach.stdout!.on("data", (chunk) => (seen += String(chunk)));
    try {
      await waitFor("two lines through attach", () => (seen.match(/^tick \d+$/gm)?.length ?? 0) >= 2, 10_000, () => seen);
    } finally {
      attach.kill();
    }
  });

  test("kubectl port-forward reaches the port the container listens on", async () => {
    const local = await freePort();
    const forward = spawn(join(env.bin, "kubectl"), ["--kubeconfig", env.admin, "port-forward", `pod/${POD}`, `${local}:${pongPort}`], { stdio: ["ignore", "pipe", "pipe"] });
    let said = "";
    forward.stdout!.on("data", (chunk) => (said += String(chunk)));
    forward.stderr!.on("data", (chunk) => (said += String(chunk)));
    try {
      await waitFor("port-forward to listen", () => said.includes(`Forwarding from 127.0.0.1:${local}`), 10_000, () => said);
      for (let i = 0; i < 2; i++) expect(await readAll(local)).toBe("pong\n");
    } finally {
      forward.kill();
    }
  });

  test("a node declaring ExtendWebSocketsToKubelet gets the WebSocket itself; one that does not, the API server's SPDY", () => {
    const counts = () => streamingCounts(kubectl(env, "get", "--raw", "/metrics"));
    const exec = () => run(join(env.bin, "kubectl"), ["--kubeconfig", env.admin, "exec", POD, "-c", "app", "--", "sh", "-c", "echo via; exit 4"]);
    const before = counts();
    expect(exec()).toMatchObject({ stdout: "via\n", status: 4 });
    const translated = counts();
    expect(translated.translated).toBe(before.translated + 1);
    kubectl(env, "patch", "node", NODE, "--subresource=status", "--type=merge", "-p", '{"status":{"declaredFeatures":["ExtendWebSocketsToKubelet"]}}');
    try {
      expect(exec()).toMatchObject({ stdout: "via\n", status: 4 });
      expect(counts().proxied).toBe(translated.proxied + 1);
    } finally {
      kubectl(env, "patch", "node", NODE, "--subresource=status", "--type=json", "-p", '[{"op":"remove","path":"/status/declaredFeatures"}]');
    }
  });

  test("the API server's node proxy refuses 127.0.0.1; its kubelet client certificate reads /stats/summary on the port itself", async () => {
    const proxied = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "get", "--raw", `/api/v1/nodes/${NODE}/proxy/stats/summary`], { stderr: "pipe" });
    expect(proxied.exitCode).not.toBe(0);
    expect(proxied.stderr.toString()).toContain("address not allowed");
    const response = await kubeletFetch("/stats/summary", { cert: pki("kube-apiserver-kubelet-client.crt"), key: pki("kube-apiserver-kubelet-client.key") });
    expect(response.status).toBe(200);
    const summary = (await response.json()) as { node: { nodeName: string }; pods: { podRef: { name: string } }[] };
    expect(summary.node.nodeName).toBe(NODE);
  });

  test("no identity or a bad token is 401; a user the cluster does not authorize is 403 in the kubelet's words; one it does is served", async () => {
    const none = await kubeletFetch("/pods", {});
    expect([none.status, await none.text()]).toEqual([401, "Unauthorized"]);
    const bad = await kubeletFetch("/pods", { token: "not-a-token" });
    expect(bad.status).toBe(401);
    // A certificate of another CA names no one.
    const stranger = await kubeletFetch("/pods", { cert: pki("front-proxy-client.crt"), key: pki("front-proxy-client.key") });
    expect(stranger.status).toBe(401);

    kubectl(env, "create", "serviceaccount", SERVICE_ACCOUNT, "-n", NAMESPACE);
    const token = kubectl(env, "create", "token", SERVICE_ACCOUNT, "-n", NAMESPACE).trim();
    const user = `system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}`;
    const pods = await kubeletFetch("/pods", { token });
    expect([pods.status, await pods.text()]).toEqual([403, `Forbidden (user=${user}, verb=get, resource=nodes, subresource(s)=[pods proxy])\n`]);
    const exec = await kubeletFetch(`/exec/${NAMESPACE}/${POD}/app?command=true&output=1`, { token, method: "POST" });
    expect([exec.status, await exec.text()]).toEqual([403, `Forbidden (user=${user}, verb=create, resource=nodes, subresource(s)=[proxy])\n`]);

    // Granted nodes/stats: served at once (a denial is cached for 30 s, and this asks for another subresource).
    kubectl(env, "create", "clusterrole", SERVICE_ACCOUNT, "--verb=get", "--resource=nodes/stats");
    kubectl(env, "create", "clusterrolebinding", SERVICE_ACCOUNT, `--clusterrole=${SERVICE_ACCOUNT}`, `--serviceaccount=${NAMESPACE}:${SERVICE_ACCOUNT}`);
    const stats = await waitFor("the granted token to read /stats/summary", async () => {
      const response = await kubeletFetch("/stats/summary", { token });
      return response.status === 200 && response;
    });
    expect(((await stats.json()) as { node: { nodeName: string } }).node.nodeName).toBe(NODE);
  });

  /** One request to the kubelet port, trusting the cluster CA, with a client certificate, a token, or neither. */
  function kubeletFetch(path: string, as: { cert?: string; key?: string; token?: string; method?: string }): Promise<Response> {
    return fetch(`https://127.0.0.1:${kubeletPort}${path}`, {
      method: as.method ?? "GET",
      headers: as.token ? { Authorization: `Bearer ${as.token}` } : {},
      tls: { ca: pki("ca.crt"), ...(as.cert && { cert: as.cert, key: as.key }) },
    });
  }
});

/** `kubectl create` of `object` with `kubeconfig`'s user; one that exists already is left as it is. */
function createUnlessPresent(bin: string, kubeconfig: string, object: object): void {
  const result = run(bin, ["--kubeconfig", kubeconfig, "create", "-f", "-"], JSON.stringify(object));
  if (result.status !== 0 && !result.stderr.includes("AlreadyExists")) throw new Error(`kubectl create: exit ${result.status}: ${result.stderr}`);
}

/** Runs a command; with `check`, throws with its stderr unless it exits 0. */
function run(bin: string, args: string[], input?: string, check = false): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(bin, args, { input, encoding: "utf8", timeout: 20_000 });
  if (check && result.status !== 0) throw new Error(`${bin} ${args.join(" ")}: exit ${result.status}: ${result.stderr}`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Everything a TCP server on 127.0.0.1:`port` sends before it closes. */
function readAll(port: number): Promise<string> {
  return new Promise((done, reject) => {
    let text = "";
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_socket, chunk) => void (text += chunk.toString()),
        close: () => done(text),
        error: (_socket, error) => reject(error),
      },
    }).catch(reject);
  });
}

/** The API server's count of exec streams it translated to SPDY and of those it proxied to the kubelet as WebSockets. */
function streamingCounts(metrics: string): { translated: number; proxied: number } {
  const count = (type: string) => Number(metrics.match(new RegExp(`^apiserver_websocket_streaming_requests_total\\{proxy_type="${type}",subresource="exec"\\} (\\d+)$`, "m"))?.[1] ?? 0);
  return { translated: count("translated_at_apiserver"), proxied: count("proxied_to_kubelet") };
}

/** What an earlier run may have left: the pod, the Node, the ServiceAccount and its grant. */
function cleanUp(env: ClusterEnv): void {
  for (const args of [
    ["delete", "pod", POD, "-n", NAMESPACE, "--grace-period=0", "--force"],
    ["delete", "node", NODE],
    ["delete", "serviceaccount", SERVICE_ACCOUNT, "-n", NAMESPACE],
    ["delete", "clusterrolebinding", SERVICE_ACCOUNT],
    ["delete", "clusterrole", SERVICE_ACCOUNT],
  ]) {
    Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, ...args, "--ignore-not-found", "--wait=false"], { stdout: "ignore", stderr: "ignore" });
  }
}
