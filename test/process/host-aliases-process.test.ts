/**
 * spec.hostAliases on the process runtime, run as root (as the suite is, for its mounts): on the
 * host's network the container reads the host's /etc/hosts with the aliases after it, off it the
 * kubelet's file for its own hostname, bound in its own mount namespace, while the host's file is
 * left as it was; a container that mounts its own keeps it.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { processRuntimes } from "../process-runtime-fixtures.ts";

const runtimes = processRuntimes("host-aliases");

const HOST_ALIASES = [{ ip: "123.45.67.89", hostnames: ["foo", "bar"] }];

async function etcHostsSeenBy(container: ContainerSpec, extra: Partial<PodSpec> = {}, spec: Record<string, unknown> = {}): Promise<string> {
  const runtime = runtimes.runtime();
  const base = contractPod("aliases", [container]);
  const pod: PodSpec = { ...base, ...extra, manifest: { ...base.manifest, spec: { ...(base.manifest.spec as object), ...spec, hostAliases: HOST_ALIASES } } };
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  runtimes.track(runtime, id);
  const status = await waitForStatus(runtime, id, (s) => s.state === "exited");
  expect(status.exitCode).toBe(0);
  return runtime.readLogs(id);
}

test("on the host's network the container reads the host's /etc/hosts with the aliases after it; the host's file is unchanged", async () => {
  const before = readFileSync("/etc/hosts", "utf8");
  const seen = await etcHostsSeenBy(contractContainer("main", ["cat", "/etc/hosts"]), { hostNetwork: true }, { hostNetwork: true });
  expect(seen).toBe(`# Kubernetes-managed hosts file (host network).\n${before}\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n`);
  expect(readFileSync("/etc/hosts", "utf8")).toBe(before);
});

test("off the host's network the container reads the kubelet's file for its loopback IP and hostname, the aliases after it", async () => {
  const before = readFileSync("/etc/hosts", "utf8");
  const seen = await etcHostsSeenBy(contractContainer("main", ["cat", "/etc/hosts"]));
  expect(seen).toStartWith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n");
  expect(seen).toEndWith("\n127.0.0.1\taliases\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n");
  expect(readFileSync("/etc/hosts", "utf8")).toBe(before);
});

test("a container that mounts its own /etc/hosts keeps it", async () => {
  const container: ContainerSpec = { ...contractContainer("main", ["cat", "/etc/hosts"]), volumeMounts: [{ name: "own", mountPath: "/etc/hosts", readOnly: true }] };
  const seen = await etcHostsSeenBy(container, { volumes: [{ name: "own", type: "hostPath", path: "/etc/hosts", hostPathType: "File" }] });
  expect(seen).toBe(readFileSync("/etc/hosts", "utf8"));
});
