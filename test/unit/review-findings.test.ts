import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatPath } from "../../src/manifest/errors.ts";
import { loadReviewFile, parseReviewText } from "../../src/tools/review/load.ts";
import { reviewTarget } from "../../src/tools/review/reviewer.ts";
import { reviewCommand } from "../../src/cli/review.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/review");

function review(file: string) {
  return loadReviewFile(file).targets.map((target) => reviewTarget(target));
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (text: string) => void out.push(text), err: (text: string) => void err.push(text) } };
}

// Each fixture is the well-configured pod with one thing changed: exactly these findings, at these fields.
const CASES: [file: string, findings: [id: string, severity: string, path: string][]][] = [
  ["liveness-calls-other-service", [["liveness-calls-other-service", "warning", "spec.containers[0].livenessProbe.httpGet.host"]]],
  [
    "liveness-calls-other-service-exec",
    [
      ["liveness-calls-other-service", "warning", "spec.containers[0].livenessProbe.exec.command"],
      ["exec-heavy-command", "warning", "spec.containers[0].livenessProbe.exec.command"],
    ],
  ],
  ["liveness-same-as-readiness", [["liveness-same-as-readiness", "warning", "spec.containers[0].livenessProbe"]]],
  ["exec-heavy-command", [["exec-heavy-command", "warning", "spec.containers[0].readinessProbe.exec.command"]]],
  ["no-readiness-probe", [["no-readiness-probe", "warning", "spec.containers[0].readinessProbe"]]],
  ["probe-port-not-declared", [["probe-port-not-declared", "warning", "spec.containers[0].livenessProbe.httpGet.port"]]],
  ["probe-port-name-unknown", [["probe-port-not-declared", "error", "spec.containers[0].livenessProbe.httpGet.port"]]],
  ["readiness-port-not-declared", [["readiness-port-not-declared", "warning", "spec.containers[0].readinessProbe.httpGet.port"]]],
  ["liveness-path-not-health", [["liveness-path-not-health", "info", "spec.containers[0].livenessProbe.httpGet.path"]]],
  ["initial-delay-instead-of-startup-probe", [["initial-delay-instead-of-startup-probe", "warning", "spec.containers[0].livenessProbe.initialDelaySeconds"]]],
  ["timeout-not-below-period", [["timeout-not-below-period", "warning", "spec.containers[0].readinessProbe.timeoutSeconds"]]],
  ["liveness-without-startup-probe", [["liveness-without-startup-probe", "warning", "spec.containers[0].livenessProbe"]]],
  ["liveness-failure-threshold-1", [["liveness-failure-threshold-1", "warning", "spec.containers[0].livenessProbe.failureThreshold"]]],
];

describe("review: one manifest per finding", () => {
  test("every fixture in findings/ has a case", () => {
    const files = readdirSync(join(FIXTURES, "findings")).map((name) => name.replace(/\.yaml$/, ""));
    expect(files.sort()).toEqual(CASES.map(([file]) => file).sort());
  });

  for (const [file, expected] of CASES) {
    test(file, () => {
      const [result] = review(join(FIXTURES, "findings", `${file}.yaml`));
      const found = result!.findings.map((finding) => [finding.id, finding.severity, formatPath(finding.path)]);
      expect(found).toEqual(expected);
      for (const finding of result!.findings) {
        expect(finding.container).toBe("web");
        expect(finding.message.length).toBeGreaterThan(20);
        expect(finding.fix.length).toBeGreaterThan(10);
      }
    });
  }

  test("the messages carry the numbers the finding is about", () => {
    const [delay] = review(join(FIXTURES, "findings", "initial-delay-instead-of-startup-probe.yaml"));
    expect(delay!.findings[0]!.message).toContain("killed only after 121s (initialDelay 90s + period 10s x failure 3 + timeout 1s)");
    const [slow] = review(join(FIXTURES, "findings", "liveness-without-startup-probe.yaml"));
    expect(slow!.findings[0]!.message).toContain("readiness waits 60s for the app to start, but liveness kills a container that is not up within 31s at most");
    const [other] = review(join(FIXTURES, "findings", "liveness-calls-other-service-exec.yaml"));
    expect(other!.findings[0]!.message).toContain("calls postgres");
  });
});

describe("review: clean manifests", () => {
  for (const dir of [join(import.meta.dir, "../../examples"), join(FIXTURES, "clean")]) {
    test(`${dir.slice(dir.lastIndexOf("/") + 1)}/ has no finding and exits 0`, () => {
      const io = capture();
      expect(reviewCommand(dir, {}, io.output)).toBe(0);
      expect(io.err).toEqual([]);
      expect(io.out.join("")).toMatch(/\nno findings in \d objects?\n$/);
    });
  }
});

describe("review: exit code", () => {
  test("1 on a warning, 0 when only info findings remain", () => {
    expect(reviewCommand(join(FIXTURES, "findings", "liveness-failure-threshold-1.yaml"), {}, capture().output)).toBe(1);
    expect(reviewCommand(join(FIXTURES, "findings", "liveness-path-not-health.yaml"), {}, capture().output)).toBe(0);
  });

  test("text output names the finding, its field, the fix and the summary", () => {
    const io = capture();
    reviewCommand(join(FIXTURES, "findings", "liveness-failure-threshold-1.yaml"), {}, io.output);
    const text = io.out.join("");
    expect(text).toContain("liveness-failure-threshold-1.yaml: Pod liveness-failure-threshold-1\n");
    expect(text).toContain("  web liveness   http-get http://:http/livez: a hang is killed within 11s (period 10s x failure 1 + timeout 1s); runs once the startup probe passes (within 60s)\n");
    expect(text).toContain("  warning liveness-failure-threshold-1  spec.containers[0].livenessProbe.failureThreshold\n");
    expect(text).toContain("          fix: allow a few failures in a row (failureThreshold: 3)");
    expect(text).toEndWith("1 finding (1 warning) in 1 object\n");
  });

  test("-o json: the findings as data, paths rendered", () => {
    const io = capture();
    reviewCommand(join(FIXTURES, "findings", "timeout-not-below-period.yaml"), { output: "json" }, io.output);
    const data = JSON.parse(io.out.join(""));
    expect(data.objects[0].kind).toBe("Pod");
    expect(data.objects[0].findings[0]).toMatchObject({
      id: "timeout-not-below-period",
      category: "timing",
      severity: "warning",
      container: "web",
      probe: "readiness",
      path: "spec.containers[0].readinessProbe.timeoutSeconds",
    });
    expect(data.objects[0].probes.find((probe: { probe: string }) => probe.probe === "startup").startupBudgetSeconds).toBe(60);
  });
});

describe("review: each workload kind's pod template", () => {
  const CONTAINER = "containers:\n  - name: app\n    image: app:1\n    livenessProbe:\n      tcpSocket: {port: 8080}\n      failureThreshold: 1\n";
  const indent = (text: string, spaces: number) => text.replace(/^/gm, " ".repeat(spaces));
  const KINDS: [kind: string, body: string, specPath: string][] = [
    ["Pod", `spec:\n${indent(CONTAINER, 2)}`, "spec"],
    ...(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"].map((kind) => [kind, `spec:\n  template:\n    spec:\n${indent(CONTAINER, 6)}`, "spec.template.spec"]) as [string, string, string][]),
    ["CronJob", `spec:\n  schedule: "* * * * *"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n${indent(CONTAINER, 10)}`, "spec.jobTemplate.spec.template.spec"],
  ];
  for (const [kind, body, specPath] of KINDS) {
    test(kind, () => {
      const file = parseReviewText(`apiVersion: v1\nkind: ${kind}\nmetadata: {name: app}\n${body}`, `${kind}.yaml`, "yaml");
      expect(file.targets.map((target) => [target.kind, formatPath(target.specPath)])).toEqual([[kind, specPath]]);
      const ids = reviewTarget(file.targets[0]!).findings.map((finding) => `${finding.id} ${formatPath(finding.path)}`);
      expect(ids).toContain(`liveness-failure-threshold-1 ${specPath}.containers[0].livenessProbe.failureThreshold`);
    });
  }

  test("a Job's pods run to completion: no readiness finding; a Service beside a Deployment is skipped", () => {
    const job = parseReviewText("kind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: app\n          ports: [{containerPort: 80}]\n", "j.yaml", "yaml");
    expect(reviewTarget(job.targets[0]!).findings).toEqual([]);
    const mixed = parseReviewText("kind: Service\nmetadata: {name: s}\n---\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: app}]\n", "m.yaml", "yaml");
    expect(mixed.targets.map((target) => [target.kind, target.document])).toEqual([["Pod", 1]]);
  });

  test("a container's own restart policy (KEP-5307): a run-to-completion container beside a server is not asked for readiness; one with its own Always in a pod under Never is", () => {
    const pod = (podPolicy: string, ownPolicy: string) =>
      parseReviewText(
        `kind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: ${podPolicy}\n  containers:\n    - name: app\n      restartPolicy: ${ownPolicy}\n      restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]\n      ports: [{containerPort: 80}]\n`,
        "p.yaml",
        "yaml",
      );
    expect(reviewTarget(pod("Always", "Never").targets[0]!).findings.map((finding) => finding.id)).toEqual([]);
    expect(reviewTarget(pod("Never", "Always").targets[0]!).findings.map((finding) => `${finding.id} ${formatPath(finding.path)}`)).toEqual(["no-readiness-probe spec.containers[0].readinessProbe"]);
  });

  test("a List (kubectl get -o yaml) and a typed list whose items carry no kind: each item's template, at its items[N] path", () => {
    const list = parseReviewText(
      "apiVersion: v1\nkind: List\nitems:\n  - kind: Service\n    metadata: {name: s}\n  - kind: Deployment\n    metadata: {name: d}\n    spec:\n      template:\n        spec:\n          containers: [{name: app, livenessProbe: {tcpSocket: {port: 80}, failureThreshold: 1}}]\n",
      "list.yaml",
      "yaml",
    );
    expect(list.targets.map((target) => `${target.kind} ${target.name} ${formatPath(target.specPath)}`)).toEqual(["Deployment d items[1].spec.template.spec"]);
    expect(reviewTarget(list.targets[0]!).findings.map((finding) => formatPath(finding.path))).toContain("items[1].spec.template.spec.containers[0].livenessProbe.failureThreshold");
    const pods = parseReviewText('{"kind": "PodList", "items": [{"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}]}}]}', "pods.json", "json");
    expect(pods.targets.map((target) => `${target.kind} ${target.name} ${formatPath(target.specPath)}`)).toEqual(["Pod p items[0].spec"]);
  });

  test("a native sidecar's probes are reviewed; a plain init container has none", () => {
    const file = parseReviewText(
      "kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n    - name: proxy\n      restartPolicy: Always\n      livenessProbe: {tcpSocket: {port: 15000}, failureThreshold: 1}\n  containers: [{name: app}]\n",
      "p.yaml",
      "yaml",
    );
    expect(reviewTarget(file.targets[0]!).findings.map((finding) => `${finding.container} ${finding.id}`)).toContain("proxy liveness-failure-threshold-1");
  });
});

describe("review: a bad file is one clear error naming the file and the field", () => {
  test("a wrong type in a probe, in the second document", () => {
    const text = "kind: Service\nmetadata: {name: s}\n---\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          livenessProbe: {tcpSocket: {port: 80}, periodSeconds: ten}\n";
    expect(() => parseReviewText(text, "d.yaml", "yaml")).toThrow(
      'd.yaml (document 2): spec.template.spec.containers[0].livenessProbe.periodSeconds: must be an integer (found string "ten")',
    );
  });

  test("YAML syntax, a probe without a handler, no kind", () => {
    expect(() => parseReviewText("kind: Pod\nspec: [\n", "s.yaml", "yaml")).toThrow(/^s\.yaml: invalid YAML: /);
    expect(() => parseReviewText("kind: Pod\nspec:\n  containers:\n    - name: a\n      readinessProbe: {periodSeconds: 5}\n", "h.yaml", "yaml")).toThrow(
      "h.yaml: spec.containers[0].readinessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found none)",
    );
    expect(() => parseReviewText("metadata: {name: x}\n", "k.yaml", "yaml")).toThrow("k.yaml: kind: required");
  });

  test("the command prints the error, reviews the other files, exits 1", () => {
    using dir = tempFiles({ "a-bad.yaml": "kind: Pod\nspec:\n  containers: {name: app}\n", "b-good.yaml": "kind: Pod\nmetadata: {name: good}\nspec:\n  containers: [{name: app}]\n" });
    const io = capture();
    expect(reviewCommand(dir.path, {}, io.output)).toBe(1);
    expect(io.err).toEqual(["error: a-bad.yaml: spec.containers: must be a list (found an object)\n"]);
    expect(io.out.join("")).toContain("b-good.yaml: Pod good");
  });
});

function tempFiles(files: Record<string, string>) {
  const path = mkdtempSync(join(tmpdir(), "minikubelet-review-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}
