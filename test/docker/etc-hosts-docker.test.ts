/**
 * The kubelet-managed /etc/hosts on a real engine: what a container reads there (the pod IP, the
 * hostAliases), a container that mounts its own /etc/hosts keeping it, and a host-network pod
 * reading the node's file with the aliases after it.
 */
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { bbContainer, DockerTestEnv, describeDocker, testPod, waitExit } from "./helpers.ts";

const HOST_ALIASES = [{ ip: "123.45.67.89", hostnames: ["foo", "bar"] }];

describeDocker("the managed /etc/hosts on docker", () => {
  let env: DockerTestEnv | undefined;
  afterEach(async () => {
    await env?.cleanup();
    env = undefined;
  });

  async function etcHostsOf(hostNetwork: boolean, extra: Parameters<typeof bbContainer>[2] = {}, volumes: Parameters<typeof testPod>[2] = {}): Promise<string> {
    env = new DockerTestEnv();
    const reader = bbContainer("reader", "cat /etc/hosts", extra);
    const pod = testPod("hosts", [reader], { hostNetwork, manifest: { spec: { hostNetwork, hostAliases: HOST_ALIASES } }, ...volumes });
    const sandbox = await env.sandbox(pod);
    const id = await env.start(pod, sandbox, reader);
    expect(await waitExit(id)).toBe(0);
    return env.runtime.readLogs(id);
  }

  test("a container reads the kubelet's file: header, the pod IP with the hostname, the aliases", async () => {
    const hosts = await etcHostsOf(false);
    expect(hosts).toStartWith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n");
    expect(hosts).toMatch(/\n172\.\d+\.\d+\.\d+\thosts\n/);
    expect(hosts).toEndWith("\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n");
  });

  test("a container that mounts its own /etc/hosts keeps it", async () => {
    const hosts = await etcHostsOf(false, { volumeMounts: [{ name: "own", mountPath: "/etc/hosts", readOnly: true }] }, {
      volumes: [{ name: "own", type: "hostPath", path: "/etc/hosts", hostPathType: "File" }],
    });
    expect(hosts).toBe(readFileSync("/etc/hosts", "utf8"));
  });

  test("on the host's network, the node's file under its own header, then the aliases", async () => {
    const hosts = await etcHostsOf(true);
    expect(hosts).toBe(`# Kubernetes-managed hosts file (host network).\n${readFileSync("/etc/hosts", "utf8")}\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n`);
  });
});
