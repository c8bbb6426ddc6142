/**
 * The kubelet-managed /etc/hosts (kubelet_pods.go makeHostsMount): its exact bytes on the pod
 * network and on the host's, the hostAliases after them, and which containers get it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcHostsMount } from "../../src/runtime/docker/docker-etc-hosts.ts";
import { podHostsBind } from "../../src/runtime/process/process-etc-hosts.ts";
import type { ContainerConfig } from "../../src/runtime/runtime.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { container, pod } from "../pod-builder.ts";

const LOCALHOST_LINES =
  "127.0.0.1\tlocalhost\n" +
  "::1\tlocalhost ip6-localhost ip6-loopback\n" +
  "fe00::0\tip6-localnet\n" +
  "fe00::0\tip6-mcastprefix\n" +
  "fe00::1\tip6-allnodes\n" +
  "fe00::2\tip6-allrouters\n";

const ALIASES = [
  { ip: "123.45.67.89", hostnames: ["foo", "bar"] },
  { ip: "2001:db8::1", hostnames: ["v6.example"] },
];

let volumeRoot = "";
let nodeHosts = "";
beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-etc-hosts-"));
  nodeHosts = join(volumeRoot, "node-hosts");
  writeFileSync(nodeHosts, "127.0.0.1\tlocalhost\n10.0.0.5\tthe-node\n");
});
afterEach(() => rmSync(volumeRoot, { recursive: true, force: true }));

function withSpec(spec: Record<string, unknown>, extra: Partial<PodSpec> = {}): PodSpec {
  const base = pod({ name: "web" });
  return { ...base, ...extra, manifest: { ...base.manifest, spec: { ...(base.manifest.spec as object), ...spec } } };
}

function config(target: PodSpec, ip: string, mountPaths: string[] = []): ContainerConfig {
  const app = container("app", { volumeMounts: mountPaths.map((mountPath) => ({ name: "v", mountPath, readOnly: false })) });
  return { pod: target, container: app, kind: "app", attempt: 0, sandbox: { id: "sandbox", ip, podUid: target.uid } };
}

function hostsFor(target: PodSpec, ip: string): string {
  const mount = etcHostsMount(config(target, ip), volumeRoot, nodeHosts);
  expect(mount).toMatchObject({ target: "/etc/hosts", readOnly: false });
  return readFileSync(mount!.source, "utf8");
}

describe("on the pod network", () => {
  test("the header, localhost, and the pod IP with its hostname: the kubelet's bytes", () => {
    expect(hostsFor(withSpec({}), "172.17.0.4")).toBe("# Kubernetes-managed hosts file.\n" + LOCALHOST_LINES + "172.17.0.4\tweb\n");
  });

  test("hostAliases follow, one line per ip, hostnames tab-separated", () => {
    expect(hostsFor(withSpec({ hostAliases: ALIASES }), "172.17.0.4")).toBe(
      "# Kubernetes-managed hosts file.\n" +
        LOCALHOST_LINES +
        "172.17.0.4\tweb\n" +
        "\n# Entries added by HostAliases.\n" +
        "123.45.67.89\tfoo\tbar\n" +
        "2001:db8::1\tv6.example\n",
    );
  });

  test("spec.hostname names the pod IP, with the FQDN first when a subdomain is set", () => {
    expect(hostsFor(withSpec({ hostname: "custom" }), "172.17.0.4")).toEndWith("\n172.17.0.4\tcustom\n");
    expect(hostsFor(withSpec({ hostname: "custom", subdomain: "sub" }), "172.17.0.4")).toEndWith("\n172.17.0.4\tcustom.sub.demo.svc.\tcustom\n");
  });

  test("spec.hostnameOverride wins, with no domain", () => {
    expect(hostsFor(withSpec({ hostname: "custom", subdomain: "sub", hostnameOverride: "over.example" }), "172.17.0.4")).toEndWith("\n172.17.0.4\tover.example\n");
  });

  test("the file is world-readable, for a container's non-root user", () => {
    const mount = etcHostsMount(config(withSpec({}), "172.17.0.4"), volumeRoot, nodeHosts)!;
    expect(statSync(mount.source).mode & 0o777).toBe(0o644);
  });

  test("a container that mounts its own /etc/hosts keeps it", () => {
    expect(etcHostsMount(config(withSpec({ hostAliases: ALIASES }), "172.17.0.4", ["/etc/hosts"]), volumeRoot, nodeHosts)).toBeUndefined();
    expect(etcHostsMount(config(withSpec({}), "172.17.0.4", ["/etc/hosts-original"]), volumeRoot, nodeHosts)).toBeDefined();
  });

  test("no IP yet, no file", () => {
    expect(etcHostsMount(config(withSpec({}), ""), volumeRoot, nodeHosts)).toBeUndefined();
  });
});

describe("on the host's network", () => {
  test("the node's own file under its own header, then the aliases", () => {
    expect(hostsFor(withSpec({ hostNetwork: true, hostAliases: ALIASES }, { hostNetwork: true }), "127.0.0.1")).toBe(
      "# Kubernetes-managed hosts file (host network).\n" +
        "127.0.0.1\tlocalhost\n10.0.0.5\tthe-node\n" +
        "\n# Entries added by HostAliases.\n" +
        "123.45.67.89\tfoo\tbar\n" +
        "2001:db8::1\tv6.example\n",
    );
  });

  test("without aliases, the node's file as it is", () => {
    expect(hostsFor(withSpec({ hostNetwork: true }, { hostNetwork: true }), "127.0.0.1")).toBe("# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n10.0.0.5\tthe-node\n");
  });
});

describe("on the process runtime", () => {
  test("as root, a pod on the pod network gets the kubelet's file for its loopback IP and hostname, its aliases after them", () => {
    const bind = podHostsBind(config(withSpec({ hostname: "web", subdomain: "svc-a", hostAliases: ALIASES }), "127.0.0.1"), volumeRoot, true, nodeHosts);
    expect(bind).toMatchObject({ target: "/etc/hosts", readOnly: false });
    expect(readFileSync(bind!.source, "utf8")).toBe(
      "# Kubernetes-managed hosts file.\n" + LOCALHOST_LINES + "127.0.0.1\tweb.svc-a.demo.svc.\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n2001:db8::1\tv6.example\n",
    );
  });

  test("as root, a pod on the host's network with aliases gets the node's file with them after it", () => {
    const bind = podHostsBind(config(withSpec({ hostNetwork: true, hostAliases: ALIASES }, { hostNetwork: true }), "127.0.0.1"), volumeRoot, true, nodeHosts);
    expect(readFileSync(bind!.source, "utf8")).toBe(
      "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n10.0.0.5\tthe-node\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n2001:db8::1\tv6.example\n",
    );
  });

  test("no bind on the host's network without aliases, without root, or over a container's own /etc/hosts", () => {
    expect(podHostsBind(config(withSpec({ hostNetwork: true }, { hostNetwork: true }), "127.0.0.1"), volumeRoot, true, nodeHosts)).toBeUndefined();
    expect(podHostsBind(config(withSpec({}), "127.0.0.1"), volumeRoot, false, nodeHosts)).toBeUndefined();
    expect(podHostsBind(config(withSpec({ hostAliases: ALIASES }), "127.0.0.1", ["/etc/hosts"]), volumeRoot, true, nodeHosts)).toBeUndefined();
  });
});
