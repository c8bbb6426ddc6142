import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { reviewCommand } from "../../src/cli/review.ts";
import { parseReviewText } from "../../src/tools/review/load.ts";
import { renderYaml } from "../../src/tools/review/render.ts";
import { reviewTarget } from "../../src/tools/review/reviewer.ts";

const FINDINGS = join(import.meta.dir, "../fixtures/review/findings");

function corrected(path: string): { code: number; yaml: string } {
  const out: string[] = [];
  const code = reviewCommand(path, { output: "yaml" }, { out: (text) => void out.push(text), err: () => {} });
  return { code, yaml: out.join("") };
}

function rereview(yaml: string) {
  const { targets } = parseReviewText(yaml, "corrected.yaml", "yaml");
  expect(targets.length).toBeGreaterThan(0);
  return targets.flatMap((target) => reviewTarget(target).findings.map((finding) => finding.id));
}

// The findings whose fix is a field change; the others need a person (a new endpoint, a lighter command).
const FIXABLE = [
  "liveness-calls-other-service",
  "liveness-same-as-readiness",
  "no-readiness-probe",
  "probe-port-not-declared",
  "probe-port-name-unknown",
  "readiness-port-not-declared",
  "initial-delay-instead-of-startup-probe",
  "timeout-not-below-period",
  "liveness-without-startup-probe",
  "liveness-failure-threshold-1",
];

describe("-o yaml: the corrected manifest", () => {
  for (const name of FIXABLE) {
    test(`${name}: reparsed and reviewed again, it has no finding; each change is commented`, () => {
      const { code, yaml } = corrected(join(FINDINGS, `${name}.yaml`));
      expect(code).toBe(1);
      expect(rereview(yaml)).toEqual([]);
      expect(yaml).toMatch(/# review: /);
      // The file's own leading comment is kept.
      expect(yaml.split("\n", 1)[0]).toStartWith("# ");
    });
  }

  test("a workload among other documents: comments, order and the other documents kept; changed fields commented", () => {
    const text = `# checkout: the API and its Service
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  template:
    spec:
      containers:
        - name: api # the API
          image: checkout:1.4
          ports:
            - name: http
              containerPort: 8080
          livenessProbe:
            httpGet:
              path: /health
              port: http
            initialDelaySeconds: 120
            failureThreshold: 1
          readinessProbe:
            httpGet:
              path: /health
              port: http
---
apiVersion: v1
kind: Service
metadata: {name: checkout}
`;
    const file = parseReviewText(text, "checkout.yaml", "yaml");
    const yaml = renderYaml([{ file, reviews: file.targets.map((target) => reviewTarget(target)) }]);
    expect(yaml).toBe(`# checkout: the API and its Service
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  template:
    spec:
      containers:
        - name: api # the API
          image: checkout:1.4
          ports:
            - name: http
              containerPort: 8080
          livenessProbe:
            failureThreshold: 3 # review: was 1 (liveness-failure-threshold-1)
            # review: was the readiness check (liveness-same-as-readiness): liveness only asks whether port http accepts connections
            tcpSocket:
              port: http
          readinessProbe:
            httpGet:
              path: /health
              port: http
          # review: added: 130s to start (period 10s x failure 13), replaces livenessProbe.initialDelaySeconds 120
          startupProbe:
            httpGet:
              path: /health
              port: http
            periodSeconds: 10
            failureThreshold: 13
---
apiVersion: v1
kind: Service
metadata: {name: checkout}
`);
    expect(rereview(yaml)).toEqual([]);
  });

  test("a startup probe added beside a liveness probe of another host checks this container", () => {
    const text = "kind: Deployment\nmetadata: {name: c}\nspec:\n  template:\n    spec:\n      containers:\n        - name: api\n          ports: [{name: http, containerPort: 8080}]\n          livenessProbe: {httpGet: {path: /health, port: http, host: postgres}}\n          readinessProbe: {httpGet: {path: /ready, port: http}, initialDelaySeconds: 60}\n";
    const file = parseReviewText(text, "c.yaml", "yaml");
    const yaml = renderYaml([{ file, reviews: file.targets.map((target) => reviewTarget(target)) }]);
    expect(yaml).toContain("          # review: added: 120s to start (period 10s x failure 12), twice readiness's initialDelaySeconds (60s)\n          startupProbe:\n            httpGet:\n              path: /health\n              port: http\n");
    expect(yaml).not.toContain("host: postgres");
    expect(yaml).toContain("          # review: removed host postgres (liveness-calls-other-service): liveness checks this container only\n          livenessProbe: {httpGet: {path: /health, port: http}}\n");
    expect(rereview(yaml)).toEqual([]);
  });

  test("a directory: one stream, each file named in a comment", () => {
    const { yaml } = corrected(join(import.meta.dir, "../../examples"));
    expect(yaml).toStartWith(`# review: file ${join(import.meta.dir, "../../examples")}/crash.json\napiVersion: v1\nkind: Pod\n`);
    expect(yaml).toContain(`\n---\n# review: file ${join(import.meta.dir, "../../examples")}/web.yaml\n# A web server`);
    expect(rereview(yaml)).toEqual([]);
  });

  test("findings a person must fix are left as they are", () => {
    const { yaml } = corrected(join(FINDINGS, "exec-heavy-command.yaml"));
    expect(rereview(yaml)).toEqual(["exec-heavy-command"]);
  });
});
