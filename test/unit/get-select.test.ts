/**
 * `get pods NAME` while a pod is still stopping and its file, now invalid, is already listed under
 * the same name: both rows are one namespace's, not a choice between namespaces.
 */
import { expect, test } from "bun:test";
import { selectPods } from "../../src/cli/get/get.ts";
import type { V1Pod } from "../../src/v1/v1.ts";

const row = (name: string, namespace: string, phase: string) => ({ metadata: { name, namespace }, status: { phase } }) as unknown as V1Pod;

test("two rows of one name in one namespace are both shown; two namespaces still ask for -n", () => {
  const stopping = row("web-lab", "demo", "Running");
  const invalid = row("web-lab", "demo", "Invalid");
  expect(selectPods([stopping, invalid], { namespace: "demo", name: "web-lab" }, "db")).toEqual([stopping, invalid]);
  expect(selectPods([stopping, invalid], { namespace: undefined, name: "web-lab" }, "db")).toEqual([stopping, invalid]);
  expect(() => selectPods([stopping, row("web-lab", "other", "Running")], { namespace: undefined, name: "web-lab" }, "db")).toThrow("several namespaces");
});
