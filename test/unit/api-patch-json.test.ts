/** JSON merge patch (RFC 7386, what kubectl label and annotate send) and JSON patch (RFC 6902). */
import { expect, test } from "bun:test";
import { jsonPatch } from "../../src/api/patch/json-patch.ts";
import { PatchError } from "../../src/api/patch/json.ts";
import { mergePatch } from "../../src/api/patch/merge-patch.ts";

const pod = { metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "a" }, { name: "side", image: "b" }] } };

test("kubectl label's merge patch adds and removes labels and keeps the rest", () => {
  expect(mergePatch(pod, { metadata: { labels: { app: null, tier: "front" } } })).toEqual({ ...pod, metadata: { name: "web", labels: { tier: "front" } } });
});

test("a merge patch replaces a list whole (no merge keys in RFC 7386)", () => {
  const patched = mergePatch(pod, { spec: { containers: [{ name: "web", image: "c" }] } }) as typeof pod;
  expect(patched.spec.containers).toEqual([{ name: "web", image: "c" }]);
  expect(pod.spec.containers).toHaveLength(2);
});

test("a JSON patch applies its operations in order and leaves the input alone", () => {
  const patched = jsonPatch(pod, [
    { op: "replace", path: "/spec/containers/1/image", value: "c" },
    { op: "add", path: "/metadata/labels/tier", value: "front" },
    { op: "test", path: "/metadata/name", value: "web" },
  ]) as typeof pod;
  expect(patched.spec.containers[1]!.image).toBe("c");
  expect(patched.metadata.labels as Record<string, string>).toEqual({ app: "web", tier: "front" });
  expect(pod.spec.containers[1]!.image).toBe("b");
});

test("a JSON patch that is not a list of operations is a 400; one that cannot apply is a 422", () => {
  expect(() => jsonPatch(pod, { op: "add" })).toThrow(PatchError);
  expect(() => jsonPatch(pod, [{ op: "frobnicate", path: "/x" }])).toThrow(expect.objectContaining({ code: 400 }));
  expect(() => jsonPatch(pod, [{ op: "test", path: "/metadata/name", value: "db" }])).toThrow(expect.objectContaining({ code: 422, message: expect.stringContaining("Test operation failed") }));
  expect(() => jsonPatch(pod, [{ op: "remove", path: "/spec/nothing/here" }])).toThrow(expect.objectContaining({ code: 422 }));
});

test("kubectl label and annotate send merge patches (captured from kubectl 1.33): a label set, a label removed, an annotation", () => {
  const labelled = mergePatch(pod, JSON.parse(`{"metadata":{"labels":{"tier":"front"}}}`)) as typeof pod;
  expect(labelled.metadata.labels as Record<string, string>).toEqual({ app: "web", tier: "front" });
  const unlabelled = mergePatch(labelled, JSON.parse(`{"metadata":{"labels":{"tier":null}}}`)) as typeof pod;
  expect(unlabelled.metadata.labels).toEqual({ app: "web" });
  const annotated = mergePatch(pod, JSON.parse(`{"metadata":{"annotations":{"note":"x"}}}`)) as any;
  expect(annotated.metadata.annotations).toEqual({ note: "x" });
});
