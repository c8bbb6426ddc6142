/**
 * A real Prometheus (Debian's) scrapes the compiled agent's /metrics over TLS with the API's token,
 * and a PromQL query through its HTTP API gives kubelet_running_pods equal to the pods running.
 * Prometheus runs on loopback on a free port, its storage in the workspace, stopped by its pid.
 */
import { expect } from "bun:test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, e2ePodManifest, freePort, processE2E, waitFor, Workspace } from "./helpers.ts";
import { testNeeding } from "../requirements.ts";

const PROMETHEUS = spawnSync("sh", ["-c", "command -v prometheus"], { encoding: "utf8" }).stdout.trim();
const e2e = processE2E();

const body = async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("one.yaml", e2ePodManifest("one"));
  ws.write("two.yaml", e2ePodManifest("two"));
  ws.write("done.yaml", e2ePodManifest("done", '      command: ["true"]').replace("spec:\n", "spec:\n  restartPolicy: Never\n"));
  const agent = new Agent(ws, ["--kubelet-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
  e2e.agents.push(agent);
  const kubelet = await waitFor("the kubelet address in the run banner", () => /minikubelet: kubelet +https:\/\/(\S+)/.exec(agent.stderr)?.[1], 15_000, () => agent.stderr);
  await waitFor("two pods running and one completed", () => {
    const table = ws.cli("get", "pods", "-n", "e2e");
    return /one-n1 .*Running/.test(table) && /two-n1 .*Running/.test(table) && /done-n1 .*Completed/.test(table);
  }, 20_000, () => agent.stdout);

  const token = readFileSync(`${ws.db}.api/token`, "utf8").trim();
  const storage = join(ws.path, "prometheus");
  mkdirSync(storage);
  const config = join(ws.path, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global: {scrape_interval: 1s, evaluation_interval: 1s}",
      "scrape_configs:",
      "  - job_name: kubelet",
      "    scheme: https",
      "    tls_config: {insecure_skip_verify: true}",
      `    authorization: {credentials: ${JSON.stringify(token)}}`,
      `    static_configs: [{targets: [${JSON.stringify(kubelet)}]}]`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const prometheus: ChildProcess = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${storage}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  prometheus.stderr!.on("data", (chunk) => (log += String(chunk)));
  try {
    const query = async (promql: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined);
      if (!response?.ok) return undefined;
      const answer = (await response.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      return answer.data.result;
    };
    const up = await waitFor("prometheus scraping the kubelet (up == 1)", async () => (await query("up"))?.find((r) => r.value[1] === "1"), 30_000, () => log);
    expect(up.metric).toMatchObject({ job: "kubelet", instance: kubelet });
    const running = ws.cli("get", "pods", "-n", "e2e").split("\n").filter((line) => / Running /.test(line)).length;
    expect(running).toBe(2);
    const pods = await waitFor("kubelet_running_pods", async () => (await query("kubelet_running_pods"))?.[0], 15_000, () => log);
    expect(Number(pods.value[1])).toBe(running);
    const containers = await query('kubelet_running_containers{container_state="running"}');
    expect(Number(containers?.[0]?.value[1])).toBe(running);
    const started = await query('sum(kubelet_started_containers_total{container_type="container"})');
    expect(Number(started?.[0]?.value[1])).toBe(3);
  } finally {
    prometheus.kill("SIGTERM");
    await new Promise((done) => (prometheus.exitCode !== null ? done(undefined) : prometheus.once("exit", done)));
  }
};

testNeeding("Prometheus scrapes /metrics over TLS with the token: kubelet_running_pods is the pods running", PROMETHEUS ? undefined : "no prometheus on PATH (Debian's prometheus)", body, 90_000);
