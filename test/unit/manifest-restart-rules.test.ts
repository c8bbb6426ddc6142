/**
 * Container restart policy and rules (KEP-5307, beta in 1.35): the API server's validation, each
 * error on its path in its words, from a file and over the API (a 422 Status with causes), and the
 * fields echoed in the served pod.
 */
import { describe, expect, test } from "bun:test";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { formatIssue, IssueList, ManifestError } from "../../src/manifest/errors.ts";
import { Fields } from "../../src/manifest/fields.ts";
import { validateContainer } from "../../src/manifest/validation/validate-container.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { apiHarness, podCreateRequest } from "../api-watch-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

type Json = Record<string, any>;

const rule = (operator: string, values: unknown[], action = "Restart"): Json => ({ action, exitCodes: { operator, values } });

function podWith(container: Json, init?: Json): Json {
  const spec: Json = { restartPolicy: "Never", containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "exit 42"], ...container }] };
  if (init) spec.initContainers = [{ name: "setup", image: "busybox", command: ["true"], ...init }];
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "rules" }, spec };
}

function issuesOf(raw: unknown): string[] {
  try {
    validatePod(raw, { file: "rules.yaml", source: "/etc/minikubelet/rules.yaml", node: "" });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

interface Refusal {
  name: string;
  pod: Json;
  /** The issue as a file's validation prints it. */
  issue: string;
  /** The Status cause the API answers with. */
  cause: { reason: string; field: string; message: string };
}

const refusals: Refusal[] = [
  {
    name: "rules without the container's own restartPolicy",
    pod: podWith({ restartPolicyRules: [rule("In", [42])] }),
    issue: "spec.containers[0].restartPolicy: required: must specify restartPolicy when restart rules are used",
    cause: { reason: "FieldValueRequired", field: "spec.containers[0].restartPolicy", message: "Required value: must specify restartPolicy when restart rules are used" },
  },
  {
    name: "an unknown container restartPolicy",
    pod: podWith({ restartPolicy: "Sometimes" }),
    issue: 'spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
    cause: { reason: "FieldValueNotSupported", field: "spec.containers[0].restartPolicy", message: 'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"' },
  },
  {
    name: "an action the API does not have",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [rule("In", [42], "RestartPod")] }),
    issue: 'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "RestartPod": supported values: "Restart", "RestartAllContainers"',
    cause: { reason: "FieldValueNotSupported", field: "spec.containers[0].restartPolicyRules[0].action", message: 'Unsupported value: "RestartPod": supported values: "Restart", "RestartAllContainers"' },
  },
  {
    name: "the RestartAllContainers action (the API's since 1.36), which this agent names as not implemented",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [rule("In", [42], "RestartAllContainers")] }),
    issue: `spec.containers[0].restartPolicyRules[0].action: not supported by this agent: the RestartAllContainers action (a rule that restarts every container of the pod, init containers first; beta in Kubernetes 1.36) is not implemented; use Restart`,
    cause: { reason: "FieldValueInvalid", field: "spec.containers[0].restartPolicyRules[0].action", message: `Invalid value: not supported by this agent: the RestartAllContainers action (a rule that restarts every container of the pod, init containers first; beta in Kubernetes 1.36) is not implemented; use Restart` },
  },
  {
    name: "a rule without an action",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [{ exitCodes: { operator: "In", values: [42] } }] }),
    issue: 'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "": supported values: "Restart", "RestartAllContainers"',
    cause: { reason: "FieldValueNotSupported", field: "spec.containers[0].restartPolicyRules[0].action", message: 'Unsupported value: "": supported values: "Restart", "RestartAllContainers"' },
  },
  {
    name: "a rule without exitCodes",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [{ action: "Restart" }] }),
    issue: "spec.containers[0].restartPolicyRules[0].exitCodes: required: must be specified",
    cause: { reason: "FieldValueRequired", field: "spec.containers[0].restartPolicyRules[0].exitCodes", message: "Required value: must be specified" },
  },
  {
    name: "an operator other than In and NotIn",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [rule("Equals", [42])] }),
    issue: 'spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Equals": supported values: "In", "NotIn"',
    cause: { reason: "FieldValueNotSupported", field: "spec.containers[0].restartPolicyRules[0].exitCodes.operator", message: 'Unsupported value: "Equals": supported values: "In", "NotIn"' },
  },
  {
    name: "21 rules (at most 20)",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: Array.from({ length: 21 }, () => rule("In", [42])) }),
    issue: "spec.containers[0].restartPolicyRules: Too many: 21: must have at most 20 items",
    cause: { reason: "FieldValueTooMany", field: "spec.containers[0].restartPolicyRules", message: "Too many: 21: must have at most 20 items" },
  },
  {
    name: "256 exit codes in one rule (at most 255)",
    pod: podWith({ restartPolicy: "Never", restartPolicyRules: [rule("In", Array.from({ length: 256 }, (_, i) => i))] }),
    issue: "spec.containers[0].restartPolicyRules[0].exitCodes.values: Too many: 256: must have at most 255 items",
    cause: { reason: "FieldValueTooMany", field: "spec.containers[0].restartPolicyRules[0].exitCodes.values", message: "Too many: 256: must have at most 255 items" },
  },
  {
    name: "a sidecar's rule to restart the whole pod (the API lets a sidecar have rules since 1.36)",
    pod: podWith({}, { restartPolicy: "Always", restartPolicyRules: [rule("In", [88], "RestartAllContainers")] }),
    issue: `spec.initContainers[0].restartPolicyRules[0].action: not supported by this agent: the RestartAllContainers action (a rule that restarts every container of the pod, init containers first; beta in Kubernetes 1.36) is not implemented; use Restart`,
    cause: { reason: "FieldValueInvalid", field: "spec.initContainers[0].restartPolicyRules[0].action", message: `Invalid value: not supported by this agent: the RestartAllContainers action (a rule that restarts every container of the pod, init containers first; beta in Kubernetes 1.36) is not implemented; use Restart` },
  },
  {
    name: "rules on an init container without its own restartPolicy",
    pod: podWith({}, { restartPolicyRules: [rule("In", [3])] }),
    issue: "spec.initContainers[0].restartPolicy: required: must specify restartPolicy when restart rules are used",
    cause: { reason: "FieldValueRequired", field: "spec.initContainers[0].restartPolicy", message: "Required value: must specify restartPolicy when restart rules are used" },
  },
];

function writableApi(dir: string) {
  const h = apiHarness(dir);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const api = { ...h.api, podWrites: sources.writes };
  return { h, create: (body: unknown) => createPod(podCreateRequest(body), api) };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("the request was accepted");
}

describe("restartPolicy and restartPolicyRules validation", () => {
  for (const c of refusals) {
    test(`a file: ${c.name}`, () => {
      expect(issuesOf(c.pod)).toEqual([c.issue]);
    });
  }

  test("over the API each refusal is a 422 Invalid whose one cause names the field in the API server's words", async () => {
    using dir = tempDir();
    const { h, create } = writableApi(dir.path);
    for (const c of refusals) {
      const error = await refusal(create(c.pod));
      expect({ name: c.name, code: error.code, causes: error.details?.causes }).toEqual({ name: c.name, code: 422, causes: [c.cause] });
    }
    h.close();
  });

  test("every problem of one container is reported, not only the first", () => {
    const pod = podWith({ restartPolicyRules: [rule("Equals", [1]), { action: "Skip" }] });
    expect(issuesOf(pod)).toEqual([
      "spec.containers[0].restartPolicy: required: must specify restartPolicy when restart rules are used",
      'spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Equals": supported values: "In", "NotIn"',
      'spec.containers[0].restartPolicyRules[1].action: Unsupported value: "Skip": supported values: "Restart", "RestartAllContainers"',
      "spec.containers[0].restartPolicyRules[1].exitCodes: required: must be specified",
    ]);
  });

  test("an exit code that is not an integer is refused on its path", () => {
    expect(issuesOf(podWith({ restartPolicy: "Never", restartPolicyRules: [rule("In", ["42"])] }))).toEqual([
      'spec.containers[0].restartPolicyRules[0].exitCodes.values[0]: must be an integer (found string "42")',
    ]);
  });

  test("rules on an ephemeral container are forbidden, as the other restart fields are", () => {
    // Ephemeral containers come only through their subresource (`kubectl debug`), which validates each one so.
    const issues = new IssueList();
    const raw = { name: "debug", image: "busybox", command: ["sh"], restartPolicyRules: [rule("In", [1])] };
    validateContainer(new Fields(raw, ["spec", "ephemeralContainers", 0], issues), { kind: "ephemeral", volumeNames: new Set() });
    expect(issues.items.map(formatIssue)).toEqual(["spec.ephemeralContainers[0].restartpolicyrules: Forbidden: cannot be set for an Ephemeral Container"]);
  });

  test("accepted: the spec carries the policy and the rules in order; 20 rules, 255 codes, an empty NotIn and rules on a plain init container are allowed", () => {
    const pod = validatePod(
      podWith(
        { restartPolicy: "Never", restartPolicyRules: [rule("In", [42]), rule("NotIn", []), ...Array.from({ length: 17 }, () => rule("In", [1])), rule("In", Array.from({ length: 255 }, (_, i) => i))] },
        { restartPolicy: "Never", restartPolicyRules: [rule("In", [3])] },
      ),
      { file: "rules.yaml", source: "/etc/minikubelet/rules.yaml", node: "" },
    );
    const main = pod.containers[0]!;
    expect(main.restartPolicy).toBe("Never");
    expect(main.restartPolicyRules).toHaveLength(20);
    expect(main.restartPolicyRules!.slice(0, 2)).toEqual([
      { action: "Restart", exitCodes: { operator: "In", values: [42] } },
      { action: "Restart", exitCodes: { operator: "NotIn", values: [] } },
    ]);
    expect(pod.initContainers[0]).toMatchObject({ restartPolicy: "Never", restartPolicyRules: [{ action: "Restart", exitCodes: { operator: "In", values: [3] } }] });
    // A container's own Always is its policy, not a sidecar's mark: only init containers become sidecars.
    const always = validatePod(podWith({ restartPolicy: "Always" }), { file: "rules.yaml", source: "/x/rules.yaml", node: "" });
    expect(always.containers[0]!.restartPolicy).toBe("Always");
  });

  test("the served pod echoes the fields as written, with no default added where none was set", async () => {
    using dir = tempDir();
    const { h, create } = writableApi(dir.path);
    const response = await create(podWith({ restartPolicy: "Never", restartPolicyRules: [rule("In", [42])] }, { command: ["true"] }));
    expect(response.status).toBe(201);
    const body = (await response.json()) as any;
    expect(body.spec.containers[0].restartPolicy).toBe("Never");
    expect(body.spec.containers[0].restartPolicyRules).toEqual([{ action: "Restart", exitCodes: { operator: "In", values: [42] } }]);
    expect(body.spec.initContainers[0].restartPolicy).toBeUndefined();
    expect(body.spec.initContainers[0].restartPolicyRules).toBeUndefined();
    h.close();
  });
});
