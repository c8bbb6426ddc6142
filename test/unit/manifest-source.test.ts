import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatIssue, ManifestSourceError } from "../../src/manifest/errors.ts";
import { loadManifest, loadManifestFile, loadManifests, ManifestCache } from "../../src/manifest/source.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mk-source-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function pod(name: string, namespace = "demo"): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: { containers: [{ name: "main", image: "busybox", command: ["sleep", "60"] }] },
  });
}

function write(name: string, text: string): void {
  writeFileSync(join(dir, name), text);
}

describe("loadManifests", () => {
  test("loads .yaml, .yml and .json files, keyed by namespace/name", () => {
    write("a.yaml", pod("a"));
    write("b.yml", pod("b"));
    write("c.json", pod("c", "other"));
    const { pods, errors } = loadManifests(dir);
    expect(errors).toEqual([]);
    expect([...pods.keys()]).toEqual(["demo/a", "demo/b", "other/c"]);
    expect(pods.get("demo/a")!.source).toBe(join(dir, "a.yaml"));
  });

  test("with a cache, a rescan parses only the files whose stat changed; a refused file stays refused", () => {
    write("a.yaml", pod("a"));
    write("b.yaml", pod("b"));
    write("bad.yaml", "kind: Pod\nmetadata: {name: bad}\n");
    // Read as if well after the files were written, when their stat can be trusted.
    const cache = new ManifestCache(() => Date.now() + 60_000);
    const first = loadManifests(dir, "", {}, new Map(), cache);
    write("b.yaml", pod("b", "moved"));
    const second = loadManifests(dir, "", {}, new Map(), cache);
    expect(second.pods.get("demo/a")).toBe(first.pods.get("demo/a")!);
    expect([...second.pods.keys()]).toEqual(["demo/a", "moved/b"]);
    expect(second.errors).toEqual(first.errors);
    rmSync(join(dir, "a.yaml"));
    expect([...loadManifests(dir, "", {}, new Map(), cache).pods.keys()]).toEqual(["moved/b"]);
  });

  test("with a cache, a file read within a clock tick of its last write is read again: a same-size rewrite may keep its mtime", () => {
    write("a.yaml", pod("a"));
    const cache = new ManifestCache(() => Date.now());
    const first = loadManifests(dir, "", {}, new Map(), cache);
    expect(loadManifests(dir, "", {}, new Map(), cache).pods.get("demo/a")).not.toBe(first.pods.get("demo/a")!);
  });

  test("with a node, pods are named NAME-NODE", () => {
    write("web.yaml", pod("web"));
    const web = loadManifests(dir, "lab").pods.get("demo/web-lab")!;
    expect(web).toMatchObject({ name: "web", fullName: "web-lab", node: "lab", key: "demo/web-lab" });
  });

  test("hidden files are skipped", () => {
    write(".web.yaml", pod("hidden"));
    write(".web.yaml.swp", "binary junk");
    write("web.yaml", pod("web"));
    const { pods, errors } = loadManifests(dir);
    expect([...pods.keys()]).toEqual(["demo/web"]);
    expect(errors).toEqual([]);
  });

  test("files with other extensions are skipped", () => {
    write("web.yaml.bak", pod("backup"));
    write("notes.txt", "not a pod");
    write("web.yaml", pod("web"));
    expect([...loadManifests(dir).pods.keys()]).toEqual(["demo/web"]);
  });

  test("subfolders are not read; one named like a manifest is reported, as the kubelet logs it", () => {
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "deep.yaml"), pod("deep"));
    mkdirSync(join(dir, "folder.yaml"));
    write("web.yaml", pod("web"));
    const { pods, errors } = loadManifests(dir);
    expect([...pods.keys()]).toEqual(["demo/web"]);
    expect(errors.map((error) => error.message)).toEqual(["folder.yaml: is a directory: not recursing into manifest path"]);
  });

  test("a symlink to a manifest is read (ConfigMap-style mounts); a dangling one is skipped", () => {
    mkdirSync(join(dir, "..data"));
    writeFileSync(join(dir, "..data", "web.yaml"), pod("web"));
    symlinkSync(join(dir, "..data", "web.yaml"), join(dir, "web.yaml"));
    symlinkSync(join(dir, "missing.yaml"), join(dir, "dangling.yaml"));
    const { pods, errors } = loadManifests(dir);
    expect([...pods.keys()]).toEqual(["demo/web"]);
    expect(errors).toEqual([]);
  });

  test("a bad file is reported and dropped; the others load", () => {
    write("a.yaml", pod("a"));
    write("bad.yaml", "kind: Pod\nspec: [1\n");
    write("probe.json", JSON.stringify({ ...JSON.parse(pod("p")), kind: "Service" }));
    const { pods, errors } = loadManifests(dir);
    expect([...pods.keys()]).toEqual(["demo/a"]);
    expect(errors.map((e) => e.file)).toEqual([join(dir, "bad.yaml"), join(dir, "probe.json")]);
    expect(errors[0]!.message).toStartWith("bad.yaml: invalid YAML: ");
    expect(errors[1]!.message).toBe('probe.json: kind: must be "Pod" (found "Service"); only Pods can be static pods');
  });

  test("a second file defining the same pod is refused, naming both files", () => {
    write("a-web.yaml", pod("web"));
    write("b-web.json", pod("web"));
    const { pods, errors } = loadManifests(dir);
    expect(pods.get("demo/web")!.source).toBe(join(dir, "a-web.yaml"));
    expect(errors).toEqual([
      {
        file: join(dir, "b-web.json"),
        message: "b-web.json: pod demo/web is already defined in a-web.yaml; ignoring this file",
        reason: "Invalid",
        issues: [{ path: [], message: "pod demo/web is already defined in a-web.yaml; ignoring this file" }],
        // The pod's name belongs to the first file's pod: the refused file shows under its own name.
        namespace: "demo",
        name: "b-web.json",
      },
    ]);
  });

  test("the same name in two namespaces is two pods", () => {
    write("a.yaml", pod("web", "one"));
    write("b.yaml", pod("web", "two"));
    expect([...loadManifests(dir).pods.keys()]).toEqual(["one/web", "two/web"]);
  });

  test("names that would escape a directory are refused", () => {
    write("a.json", pod("../x"));
    write("b.json", pod("web", "../../etc"));
    const { pods, errors } = loadManifests(dir);
    expect(pods.size).toBe(0);
    expect(errors[0]!.message).toStartWith('a.json: metadata.name: "../x" must be a DNS-1123 subdomain');
    expect(errors[1]!.message).toStartWith('b.json: metadata.namespace: "../../etc" must be a DNS-1123 label');
  });

  test("an invalid node name is refused before any file is read", () => {
    expect(() => loadManifests(dir, "../lab")).toThrow(RangeError);
  });

  test("a missing directory is an error naming it", () => {
    const missing = join(dir, "nope");
    expect(() => loadManifests(missing)).toThrow(new ManifestSourceError(missing, "does not exist"));
  });

  test("a file given as the directory is an error naming it", () => {
    write("web.yaml", pod("web"));
    expect(() => loadManifests(join(dir, "web.yaml"))).toThrow(ManifestSourceError);
  });

  test("an empty directory gives no pods and no errors", () => {
    expect(loadManifests(dir)).toEqual({ pods: new Map(), errors: [], warnings: new Map() });
  });
});

describe("refused files, as get pods shows them", () => {
  test("a file that does not decode is FailedToParse under its file name; a bad Pod is Invalid under its pod name", () => {
    write("bad.yaml", "kind: Pod\nspec: [1\n");
    write("web.json", JSON.stringify({ ...JSON.parse(pod("web")), spec: { containers: [{ name: "web" }] } }));
    write("nameless.json", JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "Not_A_Name", namespace: "demo" }, spec: {} }));
    const { errors } = loadManifests(dir, "lab");
    expect(errors.map(({ reason, namespace, name }) => ({ reason, namespace, name }))).toEqual([
      { reason: "FailedToParse", namespace: "default", name: "bad.yaml" },
      { reason: "Invalid", namespace: "demo", name: "nameless.json" },
      { reason: "Invalid", namespace: "demo", name: "web-lab" },
    ]);
    expect(errors[2]!.issues).toEqual([{ path: ["spec", "containers", 0, "image"], message: "required" }]);
  });

  test("a refused file naming a pod another file runs is shown under its own name", () => {
    write("a.json", pod("web"));
    write("b.json", JSON.stringify({ ...JSON.parse(pod("web")), spec: {} }));
    const { pods, errors } = loadManifests(dir);
    expect([...pods.keys()]).toEqual(["demo/web"]);
    expect(errors.map(({ namespace, name }) => `${namespace}/${name}`)).toEqual(["demo/b.json"]);
  });
});

describe("unknown fields (the API server's strict field validation)", () => {
  const withTypo = () =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", lables: { a: "b" } },
      spec: { containers: [{ name: "main", image: "busybox", command: ["sleep", "60"], comand: ["x"], resources: { limit: {} } }] },
    });

  test("are warnings with their field path by default: the pod loads", () => {
    write("web.json", withTypo());
    const { pods, errors, warnings } = loadManifests(dir);
    expect(errors).toEqual([]);
    expect([...pods.keys()]).toEqual(["demo/web"]);
    expect(warnings.get("demo/web")!.map(formatIssue)).toEqual([
      'unknown field "metadata.lables"',
      'unknown field "spec.containers[0].comand"',
      'unknown field "spec.containers[0].resources.limit"',
    ]);
  });

  test("are errors with strict, listed with the file's other problems", () => {
    write("web.json", withTypo().replace('"image":"busybox",', ""));
    const { pods, errors } = loadManifests(dir, "", { strict: true });
    expect(pods.size).toBe(0);
    expect(errors[0]!.message).toBe(
      'web.json: unknown field "metadata.lables"; unknown field "spec.containers[0].comand"; ' +
        'unknown field "spec.containers[0].resources.limit"; spec.containers[0].image: required',
    );
  });

  test("another kind's fields are not reported as a Pod's unknown fields: the kind is the problem", () => {
    write("deploy.json", JSON.stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 2, containers: [] } }));
    expect(loadManifests(dir, "", { strict: true }).errors[0]!.message).not.toContain("unknown field");
  });

  test("known v1 fields minikubelet does not read, and the contents of maps, are not unknown", () => {
    write("web.json", JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", labels: { anything: "x" }, annotations: { "a/b": "c" } },
      spec: {
        nodeSelector: { disk: "ssd" },
        tolerations: [{ key: "k", operator: "Exists" }],
        containers: [{ name: "main", image: "busybox", command: ["sleep"], tty: true, terminationMessagePolicy: "File" }],
      },
      status: { phase: "Pending" },
    }));
    expect(loadManifests(dir, "", { strict: true }).errors).toEqual([]);
  });

  test("are found at any depth the v1 schema describes: tolerations, affinity, spread constraints, volume sources, status", () => {
    write("web.json", JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: {
        tolerations: [{ key: "k", operator: "Exists", tolerationSecond: 5 }],
        affinity: { nodeAffinity: { requiredDuringScheduling: {} } },
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "DoNotSchedule", NodeAffinityPolicy: "Honor" }],
        volumes: [{ name: "data", emptyDir: { sizelimit: "1Gi" } }],
        containers: [{ name: "main", image: "busybox", command: ["sleep"], ports: [{ containerPort: 80, protocl: "TCP" }], resources: { limits: { cpu: "1" } } }],
      },
      status: { phaze: "Pending" },
    }));
    expect(loadManifests(dir).warnings.get("demo/web")!.map(formatIssue)).toEqual([
      'unknown field "spec.tolerations[0].tolerationSecond"',
      'unknown field "spec.affinity.nodeAffinity.requiredDuringScheduling"',
      'unknown field "spec.topologySpreadConstraints[0].NodeAffinityPolicy"',
      'unknown field "spec.volumes[0].emptyDir.sizelimit"',
      'unknown field "spec.containers[0].ports[0].protocl"',
      'unknown field "status.phaze"',
    ]);
  });
});

describe("runtime rules", () => {
  const manifest = (container: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: { volumes: [{ name: "data", emptyDir: {} }], containers: [{ name: "main", image: "busybox", ...container }], ...extra },
    });

  test("a container with neither command nor args is an error on the process runtime only; args alone are enough", () => {
    write("web.json", manifest({}));
    expect(loadManifests(dir).errors).toEqual([]);
    expect(loadManifests(dir, "", { runtime: "docker" }).errors).toEqual([]);
    expect(loadManifests(dir, "", { runtime: "process" }).errors.map((e) => e.message)).toEqual([
      "web.json: spec.containers[0]: required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)",
    ]);
    write("web.json", manifest({ args: ["sleep", "10"] }));
    expect(loadManifests(dir, "", { runtime: "process" }).errors).toEqual([]);
  });

  test("fields the process runtime cannot honour are warnings naming each field", () => {
    write("web.json", manifest(
      { command: ["sleep"], securityContext: { runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } }, volumeMounts: [{ name: "data", mountPath: "/data", readOnly: true }] },
      { securityContext: { fsGroup: 2000 } },
    ));
    const { errors, warnings } = loadManifests(dir, "", { runtime: "process" });
    expect(errors).toEqual([]);
    expect(warnings.get("demo/web")!.map(formatIssue)).toEqual([
      "spec.securityContext.fsGroup: honoured by the process runtime as an extra group of each container; volumes' ownership is not changed",
      "spec.containers[0].securityContext.seccompProfile: not honoured by the process runtime",
      "spec.containers[0].volumeMounts[0].mountPath: honoured by the process runtime only as root and where the path exists on the host (bound in the container's own mount namespace); else the process finds the volume's host path in $MINIKUBELET_VOLUME_DATA",
      "spec.containers[0].volumeMounts[0].readOnly: enforced by the process runtime only where the mountPath is honoured",
    ]);
    // Both take the user (and the fsGroup as a group, not the volumes' ownership); neither a seccomp profile.
    expect(loadManifests(dir, "", { runtime: "docker" }).warnings.get("demo/web")!.map(formatIssue)).toEqual([
      "spec.securityContext.fsGroup: honoured by the docker runtime as an extra group of each container and as the group (setgid) of the pod's emptyDir directories; other volumes' ownership is not changed",
      "spec.containers[0].securityContext.seccompProfile: not honoured by the docker runtime",
    ]);
  });

  test("a terminal, stdin and a termination message policy are honoured by both runtimes; a termination message path by docker only", () => {
    write("web.json", manifest({ command: ["sleep"], tty: true, stdin: true, stdinOnce: true, terminationMessagePath: "/tmp/done", terminationMessagePolicy: "FallbackToLogsOnError" }));
    expect(loadManifests(dir, "", { runtime: "process" }).warnings.get("demo/web")!.map(formatIssue)).toEqual([
      "spec.containers[0].terminationMessagePath: not honoured by the process runtime: the container has no file of its own there, so nothing written to it is read; with terminationMessagePolicy FallbackToLogsOnError a failed container's message is the end of its log",
    ]);
    expect(loadManifests(dir, "", { runtime: "docker" }).warnings.get("demo/web")).toBeUndefined();
  });
});

describe("loadManifestFile", () => {
  test("loads one file as its directory would, whatever else is beside it", () => {
    write("web.yaml", pod("web"));
    write("bad.yaml", "kind: Pod\n");
    const result = loadManifestFile(join(dir, "web.yaml"), "lab");
    expect([...result.pods.keys()]).toEqual(["demo/web-lab"]);
    expect(result.errors).toEqual([]);
    expect(loadManifestFile(join(dir, "bad.yaml")).errors[0]!.message).toStartWith("bad.yaml: apiVersion: required");
  });
});

describe("loadManifest", () => {
  test("loads one file by path and names it by its base name in errors", () => {
    write("web.yaml", "kind: Pod\n");
    expect(() => loadManifest(join(dir, "web.yaml"))).toThrow(/^web\.yaml: apiVersion: required/);
  });
});
