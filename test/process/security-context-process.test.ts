/**
 * The security context on the process runtime, run as root (as the suite is): the monitor runs the
 * container as its runAsUser with its groups, with containerd's default capabilities unless
 * privileged, no_new_privs when asked, a read-only root in its own mount namespace, and the pod's
 * hostname in its own UTS namespace with the kubelet's /etc/hosts; an exec in it runs the same
 * way. Each read from the container's own /proc and from the host afterwards.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { processRuntimes } from "../process-runtime-fixtures.ts";

const runtimes = processRuntimes("security");

/** containerd's default bounding set (docker's CapBnd). */
const DEFAULT_CAPABILITIES = "00000000a80425fb";

/** Runs one container of a pod whose spec (as the manifest says it) gets `spec`, the container `securityContext`; resolves with the runtime and its id. */
async function start(script: string, spec: Record<string, unknown> = {}, securityContext: Record<string, unknown> = {}, extra: Partial<PodSpec> = {}, oomScoreAdj?: number) {
  const runtime = runtimes.runtime();
  const container: ContainerSpec = contractContainer("main", ["sh", "-c", script]);
  const base = contractPod("secure", [container]);
  const pod: PodSpec = { ...base, ...extra, manifest: { spec: { ...spec, containers: [{ name: "main", securityContext }] } } };
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox, ...(oomScoreAdj !== undefined && { oomScoreAdj }) });
  runtimes.track(runtime, id);
  return { runtime, id };
}

async function output(script: string, spec: Record<string, unknown> = {}, securityContext: Record<string, unknown> = {}, extra: Partial<PodSpec> = {}): Promise<string> {
  const { runtime, id } = await start(script, spec, securityContext, extra);
  await waitForStatus(runtime, id, (status) => status.state === "exited");
  return runtime.readLogs(id);
}

const STATUS = "grep -E '^(CapBnd|CapEff|NoNewPrivs)' /proc/self/status";

test("runAsUser, runAsGroup and the pod's groups: the process and an exec in it run as them, with nothing effective", async () => {
  const { runtime, id } = await start("id; sleep 30", { securityContext: { runAsUser: 1000, supplementalGroups: [5, 6], fsGroup: 7 } }, { runAsUser: 65534, runAsGroup: 65534 });
  await waitForStatus(runtime, id, (status) => status.state === "running");
  for (let i = 0; i < 100 && !(await runtime.readLogs(id)).includes("uid="); i++) await Bun.sleep(20);
  expect(await runtime.readLogs(id)).toMatch(/^uid=65534\(\w+\) gid=65534\(\w+\) groups=65534\(\w+\),5\(\w+\),6\(\w+\),7(\(\w+\))?\n$/);
  const exec = await runtime.execSync(id, ["sh", "-c", `id -u; id -G; ${STATUS}`], 5000);
  expect(exec.output).toBe(`65534\n65534 5 6 7\nCapEff:\t0000000000000000\nCapBnd:\t${DEFAULT_CAPABILITIES}\nNoNewPrivs:\t0\n`);
});

test("a root container keeps containerd's default capabilities; added ones and privileged's are there, dropped ones are not", async () => {
  expect(await output(STATUS)).toBe(`CapEff:\t${DEFAULT_CAPABILITIES}\nCapBnd:\t${DEFAULT_CAPABILITIES}\nNoNewPrivs:\t0\n`);
  const tweaked = await output("grep CapEff /proc/self/status", {}, { capabilities: { add: ["NET_ADMIN"], drop: ["CHOWN", "KILL"] } });
  const NET_ADMIN = 1n << 12n, CHOWN = 1n, KILL = 1n << 5n;
  const kept = (BigInt(`0x${DEFAULT_CAPABILITIES}`) | NET_ADMIN) & ~CHOWN & ~KILL;
  expect(tweaked).toBe(`CapEff:\t${kept.toString(16).padStart(16, "0")}\n`);
  // Privileged is every capability the agent itself has.
  const agent = readFileSync("/proc/self/status", "utf8").match(/^CapBnd:\t(\w+)$/m)![1];
  expect(await output("grep CapEff /proc/self/status", {}, { privileged: true })).toBe(`CapEff:\t${agent}\n`);
});

test("without NET_ADMIN a root container cannot change the network, as the upstream privileged: false spec checks", async () => {
  expect(await output("ip link add minikubelet-dummy0 type dummy 2>&1; echo done")).toContain("Operation not permitted");
});

test("allowPrivilegeEscalation false is no_new_privs, for the process and an exec", async () => {
  const { runtime, id } = await start("grep NoNewPrivs /proc/self/status; sleep 30", {}, { allowPrivilegeEscalation: false });
  for (let i = 0; i < 100 && !(await runtime.readLogs(id)).includes("NoNewPrivs"); i++) await Bun.sleep(20);
  expect(await runtime.readLogs(id)).toBe("NoNewPrivs:\t1\n");
  expect((await runtime.execSync(id, ["grep", "NoNewPrivs", "/proc/self/status"], 5000)).output).toBe("NoNewPrivs:\t1\n");
});

test("readOnlyRootFilesystem: the root cannot be written, by the process or an exec, and the host's root still can", async () => {
  const marker = `/minikubelet-ro-${process.pid}`;
  const { runtime, id } = await start(`touch ${marker} 2>&1; sleep 30`, {}, { readOnlyRootFilesystem: true });
  for (let i = 0; i < 100 && (await runtime.readLogs(id)) === ""; i++) await Bun.sleep(20);
  expect(await runtime.readLogs(id)).toBe(`touch: cannot touch '${marker}': Read-only file system\n`);
  const exec = await runtime.execSync(id, ["sh", "-c", `touch ${marker}`], 5000);
  expect(exec.exitCode).toBe(1);
  expect(existsSync(marker)).toBe(false);
});

test("the pod's hostname in a UTS namespace of its own, resolved by the kubelet's /etc/hosts; the host's is unchanged", async () => {
  const seen = await output("hostname; hostname -f; grep -c Kubernetes-managed /etc/hosts", { hostname: "web-0", subdomain: "db" });
  expect(seen).toBe("web-0\nweb-0.db.contract.svc.\n1\n");
  expect(hostname()).not.toBe("web-0");
  // A pod on the host's network keeps the node's hostname and /etc/hosts.
  const onHost = await output("hostname; cat /etc/hosts", { hostNetwork: true }, {}, { hostNetwork: true });
  expect(onHost).toBe(`${hostname()}\n${readFileSync("/etc/hosts", "utf8")}`);
});

test("the kubelet's OOM score adjustment is the process's and an exec's, below the capabilities it keeps", async () => {
  const { runtime, id } = await start("cat /proc/self/oom_score_adj; sleep 30", {}, { runAsUser: 65534 }, {}, 999);
  for (let i = 0; i < 100 && (await runtime.readLogs(id)) === ""; i++) await Bun.sleep(20);
  expect(await runtime.readLogs(id)).toBe("999\n");
  expect((await runtime.execSync(id, ["cat", "/proc/self/oom_score_adj"], 5000)).output).toBe("999\n");
});
