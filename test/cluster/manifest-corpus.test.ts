/**
 * Real manifests, judged by the real API server. The corpus is every Pod file in Kubernetes
 * v1.37.2's own repository (its tests' fixtures, hack/testdata, the docs' old examples), read from
 * the Go module the control plane is built from, so nothing is copied here. Go templates (`{{`)
 * are not manifests and are left out.
 *
 * `kubectl create --dry-run=server -f FILE` asks the API server about each file as a user would send
 * it. Then `validate --runtime docker` (loadManifestFile, what it runs on one file) must:
 * - accept every file the API server accepts, or refuse it only for a reason that names a feature a
 *   static pod here cannot have (UNSUPPORTED below, each the kubelet's refusal or the agent's own);
 * - refuse every file whose Pod the API server finds invalid (422) or cannot decode (a 400: a value
 *   of the wrong type, or an unknown field under kubectl's default strict field validation), and
 *   every file kubectl cannot read as YAML, with --strict as kubectl's.
 *
 * The agent's own API (an agent on the docker runtime, `kubectl create --dry-run=server` as above)
 * must create every Pod the API server creates, or refuse it only for a feature it names as one it
 * lacks.
 *
 * MINIKUBELET_MANIFEST_CORPUS (directories, colon-separated) adds more manifests to judge, such
 * as a checkout of the Kubernetes website's content/en/examples.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { describeCluster, kubernetesModuleDir } from "../cluster-fixtures.ts";
import { loadManifestFile } from "../../src/manifest/source.ts";
import { formatIssue } from "../../src/manifest/errors.ts";
import { describeDocker } from "../docker/helpers.ts";
import { Agent, ensureBinary, freePort, waitFor, Workspace } from "../e2e/helpers.ts";

const MAX_FILE_BYTES = 256 * 1024;
/** Where a generated dump or a vendored tree would only repeat what the tests' own files hold. */
const SKIPPED_DIRS = new Set([".git", "vendor", "third_party", "openapi-spec", "discovery", "node_modules"]);

/** The refusals that name what a static pod cannot have here; anything else is a validation gap. */
const UNSUPPORTED: readonly { feature: string; pattern: RegExp }[] = [
  { feature: "API objects referenced by a static pod (the kubelet's refusal)", pattern: /static pods (may not|cannot) reference/ },
  { feature: "more than one document in a manifest file", pattern: /holds \d+ YAML documents .*put one Pod in each file/ },
  { feature: "another kind than Pod in a manifest file", pattern: /only Pods can be static pods/ },
  { feature: "generateName for a static pod", pattern: /generateName names only pods created through the agent's API/ },
  { feature: "a Windows pod on this Linux node", pattern: /is for a Windows node, and this node runs Linux/ },
  { feature: "a volume type the agent does not mount", pattern: /spec\.volumes\[\d+\]\.\w+: (Invalid value: )?\w+ volumes are not supported: / },
  { feature: "a projected volume source the agent does not fill", pattern: /projected volume sources supported: .* \(found \w+\)/ },
  { feature: "a kubelet feature this agent does not implement, named in the refusal", pattern: /not supported by this agent: .* is not implemented/ },
];

interface CorpusFile {
  path: string;
  /** Relative to the module, as the report names it. */
  name: string;
  pods: PodRef[];
}

/** What a Pod needs to exist before the API server's admission lets it in. */
interface PodRef {
  namespace: string;
  serviceAccount?: string;
}

interface Judgment {
  /** Pods of the file the API server created (dry run). */
  created: number;
  /** The API server's own words for each refused object. */
  refusals: string[];
}

function extraRoots(): string[] {
  return (process.env.MINIKUBELET_MANIFEST_CORPUS ?? "").split(":").filter((dir) => dir !== "");
}

/** Every YAML or JSON file of the tree holding at least one v1 Pod document (or List item). */
function podFiles(root: string): CorpusFile[] {
  const found: CorpusFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
        continue;
      }
      if (!entry.isFile() || !/\.(ya?ml|json)$/.test(entry.name) || statSync(path).size > MAX_FILE_BYTES) continue;
      const text = readFileSync(path, "utf8");
      if (!/"?kind"?\s*:\s*"?Pod"?\s*,?\s*$/m.test(text) || text.includes("{{")) continue;
      const pods = podsOf(text);
      if (pods.length > 0) found.push({ path, name: relative(root, path), pods });
    }
  };
  walk(root);
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

function podsOf(text: string): PodRef[] {
  const pods: PodRef[] = [];
  try {
    for (const document of parseAllDocuments(text)) {
      const value = document.toJS() as Record<string, any> | null;
      const items: any[] = value?.kind === "List" && Array.isArray(value.items) ? value.items : [value];
      for (const item of items.filter((item) => item?.kind === "Pod" && item?.apiVersion === "v1")) {
        const serviceAccount = item.spec?.serviceAccountName ?? item.spec?.serviceAccount;
        pods.push({ namespace: item.metadata?.namespace || "default", ...(typeof serviceAccount === "string" && serviceAccount !== "" && { serviceAccount }) });
      }
    }
  } catch {
    return [];
  }
  return pods;
}

/**
 * The namespaces and ServiceAccounts the corpus's Pods name, made for real (a dry run of the file's
 * own Namespace does not persist), so the verdict is on each Pod, not on what this cluster lacks.
 * Returns the namespaces made, for the clean-up.
 */
function makeWhatPodsName(server: ApiServerAccess, files: readonly CorpusFile[]): string[] {
  const admin = (...args: string[]) => Bun.spawnSync([server.kubectl, "--kubeconfig", server.kubeconfig, ...args], { stdout: "pipe", stderr: "pipe" });
  const pods = files.flatMap((file) => file.pods);
  const made: string[] = [];
  for (const namespace of new Set(pods.map((pod) => pod.namespace))) {
    if (admin("create", "namespace", namespace).exitCode === 0) made.push(namespace);
  }
  for (const pod of pods) if (pod.serviceAccount) admin("create", "serviceaccount", pod.serviceAccount, "-n", pod.namespace);
  return made;
}

/** An API server and how to ask it: the cluster's, or the agent's own. */
interface ApiServerAccess {
  kubectl: string;
  kubeconfig: string;
}

async function judge(server: ApiServerAccess, file: CorpusFile): Promise<Judgment> {
  const child = Bun.spawn([server.kubectl, "--kubeconfig", server.kubeconfig, "create", "--dry-run=server", "-o", "name", "-f", file.path], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  // The API server's warnings (a deprecated annotation, a long name) are not refusals.
  return { created: out.split("\n").filter((line) => line.startsWith("pod/")).length, refusals: err.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("Warning: ")) };
}

/** Every Pod of the file was created; another kind's refusal (a Namespace made beforehand) is not the Pod's. */
function acceptedWhole(file: CorpusFile, judgment: Judgment): boolean {
  return judgment.created === file.pods.length;
}

/** Runs `work` over `items`, `width` at a time. */
async function eachLimited<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

function validateIssues(path: string, runtime: "docker" | "process", strict = false): string[] | undefined {
  const result = loadManifestFile(path, "", { runtime, strict });
  return result.errors.length === 0 ? undefined : result.errors.flatMap((error) => error.issues.map(formatIssue));
}

describeCluster("real manifests: Kubernetes v1.37.2's own Pod files, the API server's verdict against validate's", (env) => {
  let files: CorpusFile[] = [];
  let judgments: Judgment[] = [];
  let madeNamespaces: string[] = [];

  const cluster: ApiServerAccess = { kubectl: join(env.bin, "kubectl"), kubeconfig: env.admin };

  beforeAll(async () => {
    files = [kubernetesModuleDir(), ...extraRoots()].flatMap(podFiles);
    madeNamespaces = makeWhatPodsName(cluster, files);
    judgments = await eachLimited(files, 4, (file) => judge(cluster, file));
  }, 240_000);

  // Waited for: a namespace still terminating would refuse the next run's pods.
  afterAll(() => {
    if (madeNamespaces.length > 0) Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "delete", "namespace", "--timeout=60s", ...madeNamespaces], { stdout: "ignore", stderr: "ignore" });
  }, 70_000);

  test("every file the API server accepts is accepted by validate on docker, or refused only for a feature a static pod cannot have here", () => {
    const accepted = files.filter((file, index) => acceptedWhole(file, judgments[index]!));
    const refusedOtherwise = files.flatMap((file, index) => (acceptedWhole(file, judgments[index]!) ? [] : [`${file.name}: ${judgments[index]!.refusals[0] ?? "no pod created"}`]));
    const byFeature = new Map<string, number>();
    const gaps: string[] = [];
    let valid = 0;
    let validOnProcess = 0;
    for (const file of accepted) {
      if (validateIssues(file.path, "process") === undefined) validOnProcess++;
      const issues = validateIssues(file.path, "docker");
      if (issues === undefined) {
        valid++;
        continue;
      }
      const features = new Set<string>();
      for (const issue of issues) {
        const unsupported = UNSUPPORTED.find(({ pattern }) => pattern.test(issue));
        if (unsupported) features.add(unsupported.feature);
        else gaps.push(`${file.name}: ${issue}`);
      }
      for (const feature of features) byFeature.set(feature, (byFeature.get(feature) ?? 0) + 1);
    }
    console.log(
      [
        `corpus: ${files.length} files holding a Pod; the API server accepts ${accepted.length}`,
        `validate --runtime docker accepts ${valid} of them; --runtime process accepts ${validOnProcess}`,
        ...[...byFeature].map(([feature, count]) => `refused for ${feature}: ${count}`),
        ...refusedOtherwise.map((line) => `the API server refused ${line}`),
      ].join("\n"),
    );
    // A corpus that shrank to nothing would prove nothing: the module holds over a hundred such files.
    expect(files.length).toBeGreaterThan(80);
    expect(accepted.length).toBeGreaterThan(40);
    expect(gaps).toEqual([]);
  });

  test("every file whose Pod the API server finds invalid or cannot decode is refused by validate --strict", () => {
    // A 422, a 400 the decoder gave (strict field validation, a list for an object), or YAML kubectl could not read.
    const invalid = files.filter((_, index) => judgments[index]!.refusals.some((line) => /The Pod "[^"]*" is invalid|Pod in version "v1" cannot be handled as a Pod|error converting YAML to JSON/.test(line)));
    const admitted = invalid.filter((file) => validateIssues(file.path, "docker", true) === undefined);
    console.log(`invalid or undecodable for the API server: ${invalid.length}: ${invalid.map((file) => file.name).join(", ")}`);
    expect(invalid.length).toBeGreaterThan(0);
    expect(admitted.map((file) => file.name)).toEqual([]);
  });
  describeDocker("the agent's own API (docker runtime), asked as the API server was", () => {
    let ws: Workspace;
    let agent: Agent;
    let ours: Judgment[] = [];

    beforeAll(async () => {
      ensureBinary();
      ws = new Workspace();
      agent = new Agent(ws, ["--runtime", "docker", "--api-listen", `127.0.0.1:${await freePort()}`]);
      await waitFor("the API address in the run banner", () => /minikubelet: api +https:\/\//.test(agent.stderr), 20_000, () => agent.stderr);
      const kubeconfig = join(ws.path, "agent.kubeconfig");
      writeFileSync(kubeconfig, ws.cli("kubeconfig"));
      const access: ApiServerAccess = { kubectl: cluster.kubectl, kubeconfig };
      makeWhatPodsName(access, files);
      ours = await eachLimited(files, 4, (file) => judge(access, file));
    }, 240_000);

    afterAll(async () => {
      await agent?.terminate();
      ws?.cleanup();
    });

    test("creates every Pod the API server creates, or refuses it only for a feature the agent names as one it lacks", () => {
      const gaps: string[] = [];
      let same = 0;
      files.forEach((file, index) => {
        if (!acceptedWhole(file, judgments[index]!)) return;
        if (acceptedWhole(file, ours[index]!)) return void same++;
        // The Status's causes: one on the line of `is invalid:`, or one per `* ` line after it.
        const causes = ours[index]!.refusals.map((line) => line.replace(/^.* is invalid: /, "").replace(/^\* /, "").trim()).filter((cause) => cause !== "");
        for (const cause of causes) if (!UNSUPPORTED.some(({ pattern }) => pattern.test(cause))) gaps.push(`${file.name}: ${cause}`);
      });
      console.log(`the agent's API creates ${same} of the ${files.filter((file, index) => acceptedWhole(file, judgments[index]!)).length} files the API server creates`);
      expect(same).toBeGreaterThan(80);
      expect(gaps).toEqual([]);
    });
  });
});
