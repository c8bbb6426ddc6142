/**
 * Fields of the v1.37 Pod behind alpha feature gates, which are off in the API server's defaults and
 * here: the API server drops such a field without a word (its dropDisabledPodFields), so a manifest
 * that sets one runs without it. The agent says so instead, once per field.
 */
import type { FieldPath, Issue } from "./errors.ts";
import { isPlainObject } from "./fields.ts";

/** A path step: a field name, one of several, or every element of a list. */
type Step = string | readonly string[] | "*";

const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;
const HTTP_GET_HOLDERS = ["livenessProbe", "readinessProbe", "startupProbe"] as const;

const ALPHA_FIELDS: readonly { path: readonly Step[]; gate: string }[] = [
  { path: ["spec", "schedulingGroup"], gate: "GenericWorkload" },
  { path: ["spec", "evictionResponders"], gate: "EvictionRequestAPI" },
  { path: ["spec", "volumes", "*", "emptyDir", "mode"], gate: "EmptyDirVolumeMode" },
  { path: ["spec", CONTAINER_LISTS, "*", "volumeMounts", "*", "bindMountOptions"], gate: "VolumeBindMountOptions" },
  { path: ["spec", CONTAINER_LISTS, "*", HTTP_GET_HOLDERS, "httpGet", "protocol"], gate: "H2CContainerProbe" },
  { path: ["spec", CONTAINER_LISTS, "*", "lifecycle", ["postStart", "preStop"], "httpGet", "protocol"], gate: "H2CContainerProbe" },
];

/** One warning for each alpha field `raw` sets. */
export function alphaFieldWarnings(raw: unknown): Issue[] {
  const issues: Issue[] = [];
  for (const { path, gate } of ALPHA_FIELDS) {
    for (const found of matches(raw, path, [])) {
      issues.push({ path: found, message: `dropped: the ${gate} feature gate (alpha) is off, as in the API server's defaults, which drop this field` });
    }
  }
  return issues;
}

function matches(value: unknown, steps: readonly Step[], at: FieldPath): FieldPath[] {
  if (steps.length === 0) return value === undefined || value === null ? [] : [at];
  const [step, ...rest] = steps;
  if (step === "*") return Array.isArray(value) ? value.flatMap((item, index) => matches(item, rest, [...at, index])) : [];
  if (!isPlainObject(value)) return [];
  const keys = typeof step === "string" ? [step] : step!;
  return keys.flatMap((key) => (Object.hasOwn(value, key) ? matches(value[key], rest, [...at, key]) : []));
}
