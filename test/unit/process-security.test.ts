/**
 * The process runtime's container identity (process-security.ts, capabilities.ts): the effective
 * security context turned into the monitor's options as containerd's CRI plugin turns it into an
 * OCI process, and what an agent that is not root refuses instead of running as itself.
 */
import { describe, expect, test } from "bun:test";
import type { PodSpec } from "../../src/manifest/types.ts";
import { DEFAULT_CAPABILITIES, capabilityMask } from "../../src/runtime/process/capabilities.ts";
import { identityArgs, processSecurity, type HostAccounts } from "../../src/runtime/process/process-security.ts";
import { pod } from "../pod-builder.ts";

const PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nweb:x:1000:1001::/home/web:/bin/sh\n";
const GROUP = "root:x:0:\ndisk:x:6:web\nweb:x:1001:\nvideo:x:44:web,other\n";
const ROOT: HostAccounts = { uid: 0, gid: 0, passwd: () => PASSWD, group: () => GROUP };
const USER: HostAccounts = { ...ROOT, uid: 1000, gid: 1001 };

/** containerd's default capabilities as the kernel numbers them: docker's CapBnd 00000000a80425fb. */
const DEFAULT_MASK = "a80425fb";

function withSecurity(podContext: Record<string, unknown>, own: Record<string, unknown>): PodSpec {
  const base = pod({ name: "web" });
  const spec = base.manifest.spec as { containers: Record<string, unknown>[] };
  const containers = spec.containers.map((container) => ({ ...container, securityContext: own }));
  return { ...base, manifest: { ...base.manifest, spec: { ...spec, securityContext: podContext, containers } } };
}

function security(podContext: Record<string, unknown>, own: Record<string, unknown>, host = ROOT) {
  return processSecurity(withSecurity(podContext, own), "web", host, (message) => {
    throw new Error(message);
  });
}

describe("as root", () => {
  test("no securityContext: the agent's user and groups, containerd's default capabilities", () => {
    expect(security({}, {})).toEqual({ identity: { capabilities: DEFAULT_MASK }, readOnlyRoot: false });
    expect(capabilityMask([], []).toString(16)).toBe(DEFAULT_MASK);
    expect(DEFAULT_CAPABILITIES).toHaveLength(14);
  });

  test("runAsUser without runAsGroup: the user's group and memberships from the host's passwd and group files", () => {
    expect(security({}, { runAsUser: 1000 }).identity).toMatchObject({ user: 1000, group: 1001, groups: [1001, 6, 44] });
    // A user the host does not know runs with group 0, as one an image's passwd lacks.
    expect(security({}, { runAsUser: 4242 }).identity).toMatchObject({ user: 4242, group: 0, groups: [0] });
  });

  test("the container's runAsUser and runAsGroup over the pod's; supplementalGroups and fsGroup are added", () => {
    const identity = security({ runAsUser: 1000, runAsGroup: 5, supplementalGroups: [7, 8], fsGroup: 9 }, { runAsUser: 65534 }).identity;
    expect(identity).toMatchObject({ user: 65534, group: 5, groups: [5, 7, 8, 9] });
    expect(identityArgs(identity)).toEqual(["--user", "65534", "--group", "5", "--groups", "5,7,8,9", "--capabilities", DEFAULT_MASK]);
  });

  test("capabilities add and drop over the defaults, by name with or without CAP_, ALL either way", () => {
    const mask = (add: string[], drop: string[]) => BigInt(`0x${security({}, { capabilities: { add, drop } }).identity.capabilities}`);
    const NET_ADMIN = 1n << 12n;
    const CHOWN = 1n;
    expect(mask(["NET_ADMIN"], []) & NET_ADMIN).toBe(NET_ADMIN);
    expect(mask(["cap_net_admin"], ["CHOWN"])).toBe((BigInt(`0x${DEFAULT_MASK}`) | NET_ADMIN) & ~CHOWN);
    expect(mask([], ["ALL"])).toBe(0n);
    expect(mask(["NET_BIND_SERVICE"], ["ALL"])).toBe(1n << 10n);
    expect(mask(["ALL"], [])).toBe((1n << 41n) - 1n);
    expect(() => mask(["NET_WIZARD"], [])).toThrow('securityContext.capabilities.add: unknown capability "NET_WIZARD"');
  });

  test("privileged keeps every capability the agent has; allowPrivilegeEscalation false is no_new_privs; a read-only root", () => {
    expect(security({}, { privileged: true }).identity).toEqual({});
    expect(security({}, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true })).toEqual({
      identity: { capabilities: DEFAULT_MASK, noNewPrivs: true },
      readOnlyRoot: true,
    });
    expect(identityArgs({ noNewPrivs: true })).toEqual(["--no-new-privs"]);
  });
});

describe("not as root", () => {
  test("what needs root is refused, naming the field, rather than run as the agent's user", () => {
    expect(() => security({}, { runAsUser: 0 }, USER)).toThrow("securityContext.runAsUser: the agent does not run as root (uid 1000), so its processes run as its own user and cannot run as uid 0");
    expect(() => security({ runAsGroup: 5 }, {}, USER)).toThrow("securityContext.runAsGroup:");
    expect(() => security({ fsGroup: 5 }, {}, USER)).toThrow("securityContext.supplementalGroups:");
    expect(() => security({}, { readOnlyRootFilesystem: true }, USER)).toThrow("securityContext.readOnlyRootFilesystem:");
  });

  test("its own user and group are fine; capabilities mean nothing to its processes; no_new_privs still applies", () => {
    expect(security({ runAsUser: 1000, runAsGroup: 1001 }, { capabilities: { add: ["NET_ADMIN"] }, allowPrivilegeEscalation: false }, USER)).toEqual({
      identity: { noNewPrivs: true },
      readOnlyRoot: false,
    });
  });
});
