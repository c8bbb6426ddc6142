/** spec.hostAliases checked as the API server checks them, and what the process runtime says of them. */
import { describe, expect, test } from "bun:test";
import { formatIssue, ManifestError } from "../../src/manifest/errors.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { runtimeWarnings } from "../../src/manifest/runtime-rules.ts";

const manifest = (hostAliases: unknown) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "demo" },
  spec: { hostAliases, containers: [{ name: "app", image: "busybox", command: ["sleep", "1"] }] },
});

function issuesOf(hostAliases: unknown): string[] {
  try {
    validatePod(manifest(hostAliases), { file: "web.yaml", source: "/etc/minikubelet/web.yaml", node: "" });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

describe("validation", () => {
  test("IPv4 and IPv6 addresses with DNS-1123 subdomain hostnames pass", () => {
    expect(issuesOf([{ ip: "123.45.67.89", hostnames: ["foo", "bar.example"] }, { ip: "2001:db8::1", hostnames: ["v6"] }])).toEqual([]);
  });

  test("an ip that is no address, or is missing, is refused at its path", () => {
    expect(issuesOf([{ ip: "not-an-ip", hostnames: ["foo"] }]).join("\n")).toContain("spec.hostAliases[0].ip");
    expect(issuesOf([{ hostnames: ["foo"] }]).join("\n")).toContain("must be a valid IP address");
  });

  test("strict form: no leading zeros, no IPv4-mapped IPv6", () => {
    expect(issuesOf([{ ip: "010.1.2.3", hostnames: ["foo"] }]).join("\n")).toContain("must not have leading 0s");
    expect(issuesOf([{ ip: "::ffff:1.2.3.4", hostnames: ["foo"] }]).join("\n")).toContain("must not be an IPv4-mapped IPv6 address");
  });

  test("a hostname that is no DNS-1123 subdomain is refused at its index", () => {
    const issues = issuesOf([{ ip: "1.2.3.4", hostnames: ["ok", "Not_Valid"] }]).join("\n");
    expect(issues).toContain("spec.hostAliases[0].hostnames[1]");
    expect(issues).toContain("DNS-1123 subdomain");
  });
});

describe("the process runtime", () => {
  test("warns once that the aliases are not added; docker says nothing", () => {
    const raw = manifest([{ ip: "1.2.3.4", hostnames: ["foo"] }]);
    const on = (runtime: "process" | "docker") => runtimeWarnings(raw, runtime).filter((issue) => issue.path.includes("hostAliases"));
    expect(on("process")).toHaveLength(1);
    expect(on("process")[0]!.message).toContain("/etc/hosts");
    expect(on("docker")).toEqual([]);
  });
});
