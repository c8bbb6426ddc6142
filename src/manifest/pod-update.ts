/**
 * The API server's rules for updating a Pod (ValidatePodUpdate): once created, a pod's spec is
 * fixed except for its containers' and init containers' `image`, `activeDeadlineSeconds` (set, or
 * lowered), tolerations (only added to) and `terminationGracePeriodSeconds` (to 1 from a negative
 * value); metadata's labels and annotations may change freely. Pure: both pods are v1 objects as
 * stored, with the API's defaults filled in, so a default is never mistaken for a change.
 */
import { canonicalJson } from "./hash.ts";
import { formatPath, type FieldPath, type Issue } from "./errors.ts";

type Json = Record<string, unknown>;

/** The API server's words (pkg/apis/core/validation), kept whole: kubectl users search for them. */
export const POD_UPDATE_FORBIDDEN =
  "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`," +
  "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

const IMMUTABLE_METADATA = ["name", "namespace", "uid"] as const;

/** Every rule `next` breaks as an update of `current`, each with its field path; empty when allowed. */
export function podUpdateIssues(current: Json, next: Json): Issue[] {
  const issues: Issue[] = [];
  const currentMeta = (current.metadata ?? {}) as Json;
  const nextMeta = (next.metadata ?? {}) as Json;
  for (const field of IMMUTABLE_METADATA) {
    if (nextMeta[field] !== undefined && canonicalJson(nextMeta[field]) !== canonicalJson(currentMeta[field])) {
      issues.push({ path: ["metadata", field], message: `Invalid value: ${JSON.stringify(nextMeta[field])}: field is immutable` });
    }
  }
  issues.push(...specIssues((current.spec ?? {}) as Json, (next.spec ?? {}) as Json));
  return issues;
}

function specIssues(current: Json, next: Json): Issue[] {
  const deadline = activeDeadlineIssue(current.activeDeadlineSeconds, next.activeDeadlineSeconds);
  if (deadline) return [deadline];
  const tolerations = tolerationIssue(current.tolerations, next.tolerations);
  if (tolerations) return [tolerations];
  // What may change is set back to its current value; anything still different was not allowed.
  const munged: Json = { ...next, activeDeadlineSeconds: current.activeDeadlineSeconds, tolerations: current.tolerations };
  for (const list of ["containers", "initContainers"] as const) {
    const before = current[list];
    const after = next[list];
    if (!Array.isArray(before) || !Array.isArray(after)) continue;
    munged[list] = after.map((container: unknown, index) => {
      const old = before[index] as Json | undefined;
      return old && typeof container === "object" && container !== null ? { ...(container as Json), image: old.image } : container;
    });
  }
  if (typeof current.terminationGracePeriodSeconds === "number" && current.terminationGracePeriodSeconds < 0 && next.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = current.terminationGracePeriodSeconds;
  }
  const changes = differences(withoutUndefined(current), withoutUndefined(munged), ["spec"]);
  if (changes.length === 0) return [];
  return [{ path: ["spec"], message: `Forbidden: ${POD_UPDATE_FORBIDDEN}\n${changes.map((line) => `  ${line}`).join("\n")}` }];
}

function activeDeadlineIssue(current: unknown, next: unknown): Issue | undefined {
  const path: FieldPath = ["spec", "activeDeadlineSeconds"];
  if (next === undefined || next === null) {
    return typeof current === "number" ? { path, message: "Invalid value: null: must not update from a positive integer to nil value" } : undefined;
  }
  if (typeof next !== "number" || !Number.isInteger(next) || next < 0 || next > 2 ** 31 - 1) {
    return { path, message: `Invalid value: ${JSON.stringify(next)}: must be between 0 and 2147483647, inclusive` };
  }
  if (typeof current === "number" && next > current) return { path, message: `Invalid value: ${next}: must be less than or equal to previous value` };
  return undefined;
}

/** Every current toleration must still be there (its tolerationSeconds may only be lowered). */
function tolerationIssue(current: unknown, next: unknown): Issue | undefined {
  const before = Array.isArray(current) ? (current as Json[]) : [];
  const after = Array.isArray(next) ? (next as Json[]) : [];
  const identity = (t: Json) => canonicalJson({ ...t, tolerationSeconds: undefined });
  for (const old of before) {
    const kept = after.find((t) => identity(t) === identity(old));
    const seconds = (t: Json | undefined) => (typeof t?.tolerationSeconds === "number" ? t.tolerationSeconds : undefined);
    const raised = kept && seconds(old) !== undefined && (seconds(kept) === undefined || seconds(kept)! > seconds(old)!);
    if (!kept || raised) return { path: ["spec", "tolerations"], message: "Forbidden: existing toleration can not be modified except its tolerationSeconds" };
  }
  return undefined;
}

function withoutUndefined(value: Json): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

/** One line per changed leaf, `spec.containers[0].command: ["sleep","1"] -> ["sleep","2"]`: our short form of the API server's diff. */
function differences(before: unknown, after: unknown, path: (string | number)[]): string[] {
  if (canonicalJson(before) === canonicalJson(after)) return [];
  const bothObjects = typeof before === "object" && before !== null && typeof after === "object" && after !== null;
  if (bothObjects && Array.isArray(before) === Array.isArray(after)) {
    const keys = Array.isArray(before)
      ? [...Array(Math.max(before.length, (after as unknown[]).length)).keys()]
      : [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    const sameShape = !Array.isArray(before) || before.length === (after as unknown[]).length;
    if (sameShape) {
      return keys.flatMap((key) => differences((before as Record<string | number, unknown>)[key], (after as Record<string | number, unknown>)[key], [...path, key]));
    }
  }
  const show = (value: unknown) => (value === undefined ? "<unset>" : JSON.stringify(value));
  return [`${formatPath(path)}: ${show(before)} -> ${show(after)}`];
}
