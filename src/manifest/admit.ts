/**
 * Admission of one decoded manifest, as strict as the runtime that will run it: the API's rules
 * (validate.ts), strict field validation (unknown fields warn, or refuse with `strict`), and the
 * runtime's own rules (runtime-rules.ts). `validate` and `run`'s file source both come through here,
 * so a file `validate` accepts is a file `run` runs.
 */
import type { PodSpec } from "./types.ts";
import { ManifestError, unknownFieldIssue, type Issue } from "./errors.ts";
import { unknownFields } from "./known-fields.ts";
import { runtimeErrors, runtimeWarnings, type RuntimeName } from "./runtime-rules.ts";
import { readPod, type ValidateContext } from "./validate.ts";

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

/** @throws ManifestError listing every problem found, each with its field path. */
export function admitPod(raw: unknown, context: ValidateContext, rules: ManifestRules = {}): AdmittedPod {
  const unknown = unknownFields(raw).map(unknownFieldIssue);
  const { pod, issues } = readPod(raw, context);
  // Checked on what could be read even when the API's rules failed: every problem in one report.
  if (pod && rules.runtime) issues.push(...runtimeErrors(pod, rules.runtime));
  // A refused file lists its unknown fields too, strict or not: `comand:` explains `command: required`.
  if (!pod || issues.length > 0 || (rules.strict && unknown.length > 0)) throw new ManifestError(context.file, [...unknown, ...issues]);
  const warnings = [...(rules.strict ? [] : unknown), ...(rules.runtime ? runtimeWarnings(raw, rules.runtime) : [])];
  return { pod, warnings };
}
