/**
 * `tolerations` and `affinity`, checked as the API server's ValidateTolerations and
 * validateAffinity check them (pkg/apis/core/validation): the operator and effect enums, the
 * values each operator wants, `tolerationSeconds` only with NoExecute, label keys and values,
 * weights of 1 to 100, a topologyKey. One node has nothing to schedule, so the agent keeps them as
 * written; checking them still tells a pod the API server would refuse from one it would take.
 */
import type { Fields } from "../fields.ts";
import { checkLabelValue, checkQualifiedName } from "../names.ts";

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

const unsupported = (value: string, supported: readonly string[]) => `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`;

export function checkTolerations(spec: Fields): void {
  for (const toleration of spec.objectList("tolerations")) {
    const key = toleration.string("key") ?? "";
    const operator = toleration.string("operator") ?? "";
    const value = toleration.string("value") ?? "";
    const effect = toleration.string("effect") ?? "";
    const seconds = toleration.has("tolerationSeconds") ? toleration.int("tolerationSeconds", { default: 0 }) : undefined;
    if (key !== "") labelKey(toleration, "key", key);
    // An empty key with Exists and no value tolerates every taint.
    if (key === "" && operator !== "Exists") toleration.fail("operator", 'operator must be Exists when `key` is empty, which means "match all values and all keys"');
    if (seconds !== undefined && effect !== "NoExecute") toleration.fail("effect", "effect must be 'NoExecute' when `tolerationSeconds` is set");
    if (operator === "Equal" || operator === "") {
      const issue = value === "" ? undefined : checkLabelValue(value);
      if (issue) toleration.fail("operator", issue);
    } else if (operator === "Exists") {
      if (value !== "") toleration.fail("operator", "value must be empty when `operator` is 'Exists'");
    } else {
      toleration.fail("operator", unsupported(operator, ["Equal", "Exists"]));
    }
    if (effect !== "" && !TAINT_EFFECTS.includes(effect)) toleration.fail("effect", unsupported(effect, TAINT_EFFECTS));
  }
}

export function checkAffinity(spec: Fields): void {
  const affinity = spec.object("affinity");
  if (!affinity) return;
  const node = affinity.object("nodeAffinity");
  if (node) {
    const required = node.object("requiredDuringSchedulingIgnoredDuringExecution");
    if (required) {
      const terms = required.objectList("nodeSelectorTerms");
      if (terms.length === 0) required.fail("nodeSelectorTerms", "Required value: must have at least one node selector term");
      for (const term of terms) checkNodeSelectorTerm(term);
    }
    for (const preferred of node.objectList("preferredDuringSchedulingIgnoredDuringExecution")) {
      checkWeight(preferred);
      const preference = preferred.object("preference");
      if (preference) checkNodeSelectorTerm(preference);
      else preferred.fail("preference", "Required value");
    }
  }
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const pod = affinity.object(kind);
    if (!pod) continue;
    for (const term of pod.objectList("requiredDuringSchedulingIgnoredDuringExecution")) checkPodAffinityTerm(term);
    for (const weighted of pod.objectList("preferredDuringSchedulingIgnoredDuringExecution")) {
      checkWeight(weighted);
      const term = weighted.object("podAffinityTerm");
      if (term) checkPodAffinityTerm(term);
      else weighted.fail("podAffinityTerm", "Required value");
    }
  }
}

function checkNodeSelectorTerm(term: Fields): void {
  for (const requirement of term.objectList("matchExpressions")) {
    const values = checkRequirement(requirement, true);
    values.forEach((value, index) => {
      const issue = checkLabelValue(value);
      if (issue) requirement.fail("values", `[${index}]: ${issue}`);
    });
  }
  for (const requirement of term.objectList("matchFields")) {
    const operator = requirement.string("operator") ?? "";
    const values = requirement.stringList("values");
    if (operator === "In" || operator === "NotIn") {
      if (values.length !== 1) requirement.fail("values", "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
    } else {
      requirement.fail("operator", `Invalid value: ${JSON.stringify(operator)}: not a valid selector operator`);
    }
    const key = requirement.string("key") ?? "";
    if (key !== "metadata.name") requirement.fail("key", `Invalid value: ${JSON.stringify(key)}: not a valid field selector key`);
  }
}

function checkPodAffinityTerm(term: Fields): void {
  const selector = term.object("labelSelector");
  if (selector) checkLabelSelector(selector);
  const topologyKey = term.string("topologyKey") ?? "";
  if (topologyKey === "") term.fail("topologyKey", "Required value: can not be empty");
  else labelKey(term, "topologyKey", topologyKey);
  const namespaceSelector = term.object("namespaceSelector");
  if (namespaceSelector) checkLabelSelector(namespaceSelector);
}

function checkLabelSelector(selector: Fields): void {
  for (const [key, value] of Object.entries(selector.stringMap("matchLabels"))) {
    const issue = checkQualifiedName(key) ?? checkLabelValue(value);
    if (issue) selector.fail("matchLabels", issue);
  }
  for (const requirement of selector.objectList("matchExpressions")) checkRequirement(requirement, false);
}

/**
 * A selector requirement's key, operator and the values its operator wants (a node selector's also
 * takes Gt and Lt, with one value); returns the values.
 */
function checkRequirement(requirement: Fields, nodeSelector: boolean): string[] {
  const operator = requirement.string("operator") ?? "";
  const values = requirement.stringList("values");
  if (operator === "In" || operator === "NotIn") {
    if (values.length === 0) requirement.fail("values", "Required value: must be specified when `operator` is 'In' or 'NotIn'");
  } else if (operator === "Exists" || operator === "DoesNotExist") {
    if (values.length > 0) requirement.fail("values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  } else if (nodeSelector && (operator === "Gt" || operator === "Lt")) {
    if (values.length !== 1) requirement.fail("values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
  } else {
    requirement.fail("operator", `Invalid value: ${JSON.stringify(operator)}: not a valid selector operator`);
  }
  labelKey(requirement, "key", requirement.string("key") ?? "");
  return values;
}

function checkWeight(weighted: Fields): void {
  const weight = weighted.int("weight", { default: 0 });
  if (weight < 1 || weight > 100) weighted.fail("weight", `Invalid value: ${weight}: must be in the range 1-100`);
}

function labelKey(fields: Fields, field: string, key: string): void {
  const issue = checkQualifiedName(key);
  if (issue) fields.fail(field, issue);
}
