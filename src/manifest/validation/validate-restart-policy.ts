/**
 * A container's own `restartPolicy` and `restartPolicyRules` (KEP-5307, beta and on by default in
 * 1.35), held to the v1.37 API server's validateContainerRestartPolicy and
 * validateInitContainerRestartPolicy: the same three policies as the pod's, rules only beside a
 * policy, at most 20 rules on exit codes `In` or `NotIn` at most 255 values, of the action `Restart`
 * or (RestartAllContainersOnContainerExits, beta and on since 1.36, which also lets a sidecar have
 * rules) `RestartAllContainers`. That second action is not implemented here, and says so.
 */
import type { ContainerRestartRule, RestartPolicy } from "../types.ts";
import { describeValue, type Fields } from "../fields.ts";

const POLICIES: readonly RestartPolicy[] = ["Always", "Never", "OnFailure"];
/** What the API takes, sorted as NotSupported lists them. */
const API_ACTIONS: readonly string[] = ["Restart", "RestartAllContainers"];
const OPERATORS: readonly ContainerRestartRule["exitCodes"]["operator"][] = ["In", "NotIn"];
const MAX_RULES = 20;
const MAX_EXIT_CODES = 255;
const INT32 = 2 ** 31;

/** field.NotSupported's words: `Unsupported value: "X": supported values: "A", "B"`. */
function unsupported(value: string, allowed: readonly string[]): string {
  return `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((v) => JSON.stringify(v)).join(", ")}`;
}

/** field.TooMany's words. */
function tooMany(count: number, max: number): string {
  return `Too many: ${count}: must have at most ${max} items`;
}

export interface ContainerRestart {
  restartPolicy?: RestartPolicy;
  restartPolicyRules?: ContainerRestartRule[];
}

/**
 * The container's policy and rules as read, each problem recorded on its path. On an init
 * container `Always` makes a sidecar; on an app container it is its policy. Either may have rules.
 */
export function readContainerRestart(fields: Fields): ContainerRestart {
  const out: ContainerRestart = {};
  const policy = fields.string("restartPolicy");
  if (policy !== undefined) {
    if ((POLICIES as readonly string[]).includes(policy)) out.restartPolicy = policy as RestartPolicy;
    else fields.fail("restartPolicy", unsupported(policy, POLICIES));
  }
  const entries = fields.list("restartPolicyRules");
  if (entries.length === 0) return out;
  if (!fields.has("restartPolicy")) fields.fail("restartPolicy", "required: must specify restartPolicy when restart rules are used");
  if (entries.length > MAX_RULES) fields.fail("restartPolicyRules", tooMany(entries.length, MAX_RULES));
  const rules: ContainerRestartRule[] = [];
  for (const rule of fields.objectList("restartPolicyRules")) {
    const action = rule.string("action") ?? "";
    if (!API_ACTIONS.includes(action)) rule.fail("action", unsupported(action, API_ACTIONS));
    else if (action === "RestartAllContainers") {
      rule.fail("action", "not supported by this agent: the RestartAllContainers action (a rule that restarts every container of the pod, init containers first; beta in Kubernetes 1.36) is not implemented; use Restart");
    }
    const exitCodes = rule.object("exitCodes");
    if (!exitCodes) {
      if (!rule.has("exitCodes")) rule.fail("exitCodes", "required: must be specified");
      continue;
    }
    const operator = exitCodes.string("operator") ?? "";
    if (!(OPERATORS as readonly string[]).includes(operator)) exitCodes.fail("operator", unsupported(operator, OPERATORS));
    const values = exitCodes.list("values");
    if (values.length > MAX_EXIT_CODES) exitCodes.fail("values", tooMany(values.length, MAX_EXIT_CODES));
    const codes: number[] = [];
    for (const item of values) {
      // An int32 in the API's types: anything else does not decode.
      if (typeof item.value === "number" && Number.isInteger(item.value) && item.value >= -INT32 && item.value < INT32) codes.push(item.value);
      else fields.issues.add(item.path, `must be an integer (found ${describeValue(item.value)})`);
    }
    rules.push({ action: "Restart", exitCodes: { operator: operator as ContainerRestartRule["exitCodes"]["operator"], values: codes } });
  }
  if (rules.length > 0) out.restartPolicyRules = rules;
  return out;
}
