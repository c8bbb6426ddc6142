/**
 * `$(VAR)` expansion as Kubernetes does it (third_party/forked/golang/expansion's cases): defined
 * names replaced, `$$` an escaped `$`, undefined or unterminated references left as written; env
 * values see only the variables before them, command and args the whole env.
 */
import { describe, expect, test } from "bun:test";
import { expand, expandCommand, expandEnv } from "../../src/kubelet/env/env-expansion.ts";
import { container } from "../pod-builder.ts";

const vars = new Map([
  ["VAR_A", "A"],
  ["VAR_B", "B"],
  ["VAR_EMPTY", ""],
  ["POD_IP", "10.0.0.2"],
]);

describe("expand", () => {
  const cases: [input: string, want: string][] = [
    ["$(VAR_A)", "A"],
    ["___$(VAR_B)___", "___B___"],
    ["$(VAR_A)-$(VAR_B)", "A-B"],
    ["$(VAR_EMPTY)x", "x"],
    ["$(UNDEFINED)", "$(UNDEFINED)"],
    ["$$(VAR_A)", "$(VAR_A)"],
    ["$$$(VAR_A)", "$A"],
    ["$$", "$"],
    ["echo $$HOME", "echo $HOME"],
    ["$(VAR_A", "$(VAR_A"],
    ["$VAR_A", "$VAR_A"],
    ["ends with $", "ends with $"],
    ["$()", "$()"],
    ["http://$(POD_IP):8080/", "http://10.0.0.2:8080/"],
    ["echo $(date)", "echo $(date)"],
  ];
  for (const [input, want] of cases) test(`${JSON.stringify(input)} -> ${JSON.stringify(want)}`, () => expect(expand(input, vars)).toBe(want));
});

test("an env value sees the variables defined before it, not after; a resolved valueFrom is not expanded again", () => {
  const sources = [
    { name: "LATER_REF", value: "$(NAME)" },
    { name: "NAME", value: "", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    { name: "URL", value: "http://$(NAME)/" },
    { name: "RAW", value: "", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.annotations['x']" } } },
  ];
  const resolved = [
    { name: "LATER_REF", value: "$(NAME)" },
    { name: "NAME", value: "web-lab" },
    { name: "URL", value: "http://$(NAME)/" },
    { name: "RAW", value: "$(NAME)" },
  ];
  expect(expandEnv(resolved, sources)).toEqual([
    { name: "LATER_REF", value: "$(NAME)" },
    { name: "NAME", value: "web-lab" },
    { name: "URL", value: "http://web-lab/" },
    { name: "RAW", value: "$(NAME)" },
  ]);
});

test("command and args are expanded against the whole env", () => {
  const spec = container("web", { command: ["sh", "-c", "echo $(NAME) $$(NAME)"], args: ["$(IP)"] });
  expect(expandCommand(spec, [{ name: "NAME", value: "first" }, { name: "IP", value: "10.0.0.2" }, { name: "NAME", value: "web-lab" }])).toEqual({ command: ["sh", "-c", "echo web-lab $(NAME)"], args: ["10.0.0.2"] });
});
