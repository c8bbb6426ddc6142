/**
 * Admission of one decoded manifest, as strict as the runtime that will run it: the API's rules
 * (validate.ts), strict field validation (unknown fields warn, or refuse with `strict`), and the
 * runtime's own rules (runtime-rules.ts). `validate` and `run`'s file source both come through here,
 * so a file `validate` accepts is a file `run` runs.
 */
import type { PodSpec } from "./types.ts";
import { ManifestError, unknownFieldIssue, type Issue } from "./errors.ts";
import { unknownFields } from "./known-fields.ts";
import { alphaFieldWarnings } from "./alpha-fields.ts";
import { isPlainObject } from "./fields.ts";
import { runtimeErrors, runtimeWarnings, type RuntimeName } from "./runtime-rules.ts";
import { readPod, type ValidateContext } from "./validation/validate.ts";

export interface ManifestRules {
  /** Apply this runtime's rules too (a missing command on the process runtime is an error). */
  runtime?: RuntimeName;
  /** Unknown fields are errors, like the API server's fieldValidation=Strict; else warnings. */
  strict?: boolean;
}

export interface AdmittedPod {
  pod: PodSpec;
  /** What does not stop the pod but will not take effect: unknown fields, fields the runtime ignores. */
  warnings: Issue[];
}

/** The longest excerpt of another kind's name quoted back. */
const MAX_KIND_EXCERPT = 40;

/** Whether the decoded document says it is a Pod; only then is it read (and quoted) as one. */
export function declaresPod(raw: unknown): raw is Record<string, unknown> {
  return isPlainObject(raw) && raw.kind === "Pod";
}

/**
 * The refusal of a document that does not say `kind: Pod`, naming the kind and nothing else of
 * it. Like the kubelet, which decodes a file only as a Pod ("couldn't parse as pod"), such a file is
 * not walked for its fields: a symlink to /etc/shadow or a kubeconfig would otherwise have its
 * contents published as field names and values.
 */
function notAPod(raw: unknown): Issue {
  const suffix = "; the file is not read as a Pod";
  if (!isPlainObject(raw)) return { path: [], message: `must be a Pod object (found ${typeName(raw)})${suffix}` };
  if (raw.kind === undefined) return { path: ["kind"], message: `required (must be "Pod")${suffix}` };
  if (typeof raw.kind !== "string") return { path: ["kind"], message: `must be "Pod" (found ${typeName(raw.kind)})${suffix}` };
  const excerpt = raw.kind.length > MAX_KIND_EXCERPT ? `${raw.kind.slice(0, MAX_KIND_EXCERPT)}...` : raw.kind;
  return { path: ["kind"], message: `must be "Pod" (found ${JSON.stringify(excerpt)}); only Pods can be static pods` };
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** @throws ManifestError listing every problem found, each with its field path. */
export function admitPod(raw: unknown, context: ValidateContext, rules: ManifestRules = {}): AdmittedPod {
  if (!declaresPod(raw)) throw new ManifestError(context.file, [notAPod(raw)]);
  const unknown = unknownFields(raw).map(unknownFieldIssue);
  const { pod, issues } = readPod(raw, context);
  // Checked on what could be read even when the API's rules failed: every problem in one report.
  if (pod && rules.runtime) issues.push(...runtimeErrors(pod, rules.runtime));
  // A refused file lists its unknown fields too, strict or not: `comand:` explains `command: required`.
  if (!pod || issues.length > 0 || (rules.strict && unknown.length > 0)) throw new ManifestError(context.file, [...unknown, ...issues]);
  const warnings = [...(rules.strict ? [] : unknown), ...alphaFieldWarnings(raw), ...(rules.runtime ? runtimeWarnings(raw, rules.runtime) : []), ...(context.apiObjects === "allowed" ? [] : tokenWarnings(raw))];
  return { pod, warnings };
}

/**
 * A static pod that asks for a ServiceAccount's token: none is mounted in one (its mirror may not
 * name a ServiceAccount), where a pod an API server admits gets its ServiceAccount's.
 */
function tokenWarnings(raw: Record<string, unknown>): Issue[] {
  const spec = isPlainObject(raw.spec) ? raw.spec : {};
  const asked: string[] = ["serviceAccountName", "serviceAccount"].filter((field) => typeof spec[field] === "string" && spec[field] !== "");
  if (spec.automountServiceAccountToken === true) asked.push("automountServiceAccountToken");
  const why = "a static pod runs without a ServiceAccount token; a pod created through the agent's API (kubectl apply -f FILE) runs with its ServiceAccount's";
  return asked.map((field) => ({ path: ["spec", field], message: `not honoured: ${why}` }));
}
