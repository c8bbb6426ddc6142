/**
 * Strategic merge patch of a Pod, as apimachinery applies it: the bodies are the shapes kubectl
 * sends (apply's three-way patch, set image, edit), and the directives it uses.
 */
import { describe, expect, test } from "bun:test";
import type { JsonObject } from "../../src/api/patch/json.ts";
import { PatchError } from "../../src/api/patch/json.ts";
import { strategicMergePatch } from "../../src/api/patch/strategic-merge.ts";

function pod(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", labels: { app: "web" }, finalizers: ["a", "b"] },
    spec: {
      containers: [
        {
          name: "web",
          image: "busybox:1",
          command: ["sh", "-c", "sleep 1000"],
          env: [
            { name: "A", value: "1" },
            { name: "B", value: "2" },
          ],
          ports: [{ containerPort: 80, protocol: "TCP" }],
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        },
        { name: "side", image: "busybox:1", command: ["sleep", "1000"] },
      ],
      volumes: [{ name: "data", emptyDir: {} }],
      tolerations: [{ key: "k", operator: "Exists" }],
      restartPolicy: "Always",
    },
  };
}

const spec = (object: JsonObject) => object.spec as JsonObject;
const containers = (object: JsonObject) => spec(object).containers as JsonObject[];

describe("strategic merge patch of a Pod", () => {
  test("kubectl apply's image change merges the container by name: the other container and the other fields stay", () => {
    const patched = strategicMergePatch(pod(), {
      metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"Pod"}\n' } },
      spec: { "$setElementOrder/containers": [{ name: "web" }, { name: "side" }], containers: [{ image: "busybox:2", name: "web" }] },
    } as JsonObject);
    expect(containers(patched).map((c) => [c.name, c.image])).toEqual([
      ["web", "busybox:2"],
      ["side", "busybox:1"],
    ]);
    expect(containers(patched)[0]!.command).toEqual(["sh", "-c", "sleep 1000"]);
    expect((patched.metadata as JsonObject).annotations).toEqual({ "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"Pod"}\n' });
    expect((patched.metadata as JsonObject).labels).toEqual({ app: "web" });
  });

  test("the original is not changed", () => {
    const original = pod();
    strategicMergePatch(original, { spec: { containers: [{ name: "web", image: "x" }] } });
    expect(original).toEqual(pod());
  });

  test("env merges by name, ports by containerPort, volumeMounts by mountPath; null deletes a map key", () => {
    const patched = strategicMergePatch(pod(), {
      metadata: { labels: { app: null, tier: "front" } },
      spec: {
        containers: [
          {
            name: "web",
            env: [{ name: "B", value: "3" }, { name: "C", value: "4" }],
            ports: [{ containerPort: 80, name: "http" }],
            volumeMounts: [{ mountPath: "/data", readOnly: true }],
          },
        ],
      },
    });
    const web = containers(patched)[0]!;
    expect(web.env).toEqual([
      { name: "A", value: "1" },
      { name: "B", value: "3" },
      { name: "C", value: "4" },
    ]);
    expect(web.ports).toEqual([{ containerPort: 80, protocol: "TCP", name: "http" }]);
    expect(web.volumeMounts).toEqual([{ name: "data", mountPath: "/data", readOnly: true }]);
    expect((patched.metadata as JsonObject).labels).toEqual({ tier: "front" });
  });

  test("a list without a merge strategy (command, tolerations) is replaced whole", () => {
    const patched = strategicMergePatch(pod(), {
      spec: { tolerations: [{ key: "other", operator: "Exists" }], containers: [{ name: "web", command: ["true"] }] },
    });
    expect(spec(patched).tolerations).toEqual([{ key: "other", operator: "Exists" }]);
    expect(containers(patched)[0]!.command).toEqual(["true"]);
  });

  test("$patch: delete removes the element with that merge key; $patch: replace replaces the list", () => {
    const deleted = strategicMergePatch(pod(), { spec: { containers: [{ $patch: "delete", name: "side" }] } });
    expect(containers(deleted).map((c) => c.name)).toEqual(["web"]);
    const replaced = strategicMergePatch(pod(), { spec: { containers: [{ $patch: "replace" }, { name: "only", image: "x" }] } });
    expect(containers(replaced)).toEqual([{ name: "only", image: "x" }]);
  });

  test("$patch: replace on a map replaces it; $patch: delete removes it", () => {
    const replaced = strategicMergePatch(pod(), { metadata: { labels: { $patch: "replace", fresh: "yes" } } });
    expect((replaced.metadata as JsonObject).labels).toEqual({ fresh: "yes" });
    const deleted = strategicMergePatch(pod(), { metadata: { labels: { $patch: "delete" } } });
    expect((deleted.metadata as JsonObject).labels).toBeUndefined();
  });

  test("a new element is appended, and $setElementOrder puts the list in the applied order", () => {
    const patched = strategicMergePatch(pod(), {
      spec: {
        "$setElementOrder/containers": [{ name: "first" }, { name: "web" }, { name: "side" }],
        containers: [{ name: "first", image: "x" }],
      },
    });
    expect(containers(patched).map((c) => c.name)).toEqual(["first", "web", "side"]);
  });

  test("an element $setElementOrder does not name keeps its place", () => {
    const patched = strategicMergePatch(pod(), {
      spec: { "$setElementOrder/containers": [{ name: "side" }], containers: [{ name: "side", image: "y" }] },
    });
    expect(containers(patched).map((c) => c.name)).toEqual(["web", "side"]);
  });

  test("$retainKeys on a volume drops the source the patch no longer names (volumes are merge,retainKeys)", () => {
    const patched = strategicMergePatch(pod(), {
      spec: { volumes: [{ $retainKeys: ["hostPath", "name"], name: "data", hostPath: { path: "/srv" } }] },
    });
    expect(spec(patched).volumes).toEqual([{ name: "data", hostPath: { path: "/srv" } }]);
    expect(() => strategicMergePatch(pod(), { spec: { volumes: [{ $retainKeys: ["name"], name: "data", hostPath: { path: "/srv" } }] } })).toThrow(
      /spec.volumes\[0\].\$retainKeys: the patch sets hostPath, which \$retainKeys does not keep/,
    );
  });

  test("a primitive list with the merge strategy (finalizers) is a set: union, and $deleteFromPrimitiveList removes", () => {
    const patched = strategicMergePatch(pod(), {
      metadata: { finalizers: ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"], "$setElementOrder/finalizers": ["c", "b"] },
    });
    expect((patched.metadata as JsonObject).finalizers).toEqual(["c", "b"]);
  });

  test("an element without its merge key, or a directive it does not know, is a BadRequest naming the path", () => {
    expect(() => strategicMergePatch(pod(), { spec: { containers: [{ image: "x" }] } })).toThrow(
      new PatchError('spec.containers[0]: map: {"image":"x"} does not contain declared merge key: name'),
    );
    expect(() => strategicMergePatch(pod(), { spec: { $patch: "explode" } })).toThrow(/spec: unknown patch type: "explode"/);
  });

  test("a field absent from the original takes the patch's value with its nulls and directives resolved", () => {
    const patched = strategicMergePatch(pod(), { metadata: { annotations: { a: "1", b: null } }, spec: { activeDeadlineSeconds: 30 } });
    expect((patched.metadata as JsonObject).annotations).toEqual({ a: "1" });
    expect(spec(patched).activeDeadlineSeconds).toBe(30);
  });
});

describe("bodies captured from kubectl 1.33 (-v=8) against the agent", () => {
  const current = (): JsonObject => ({
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: {
      containers: [
        { name: "side", image: "busybox:1", command: ["sleep", "1000"] },
        { name: "web", image: "busybox:1", command: ["sleep", "1000"] },
      ],
    },
  });

  test("kubectl apply of a file that changes one image and adds an env var", () => {
    const body = String.raw`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n"},"labels":{"app":"web"}},"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"web"}],"containers":[{"env":[{"name":"A","value":"1"}],"name":"side"},{"image":"busybox:5","name":"web"}]}}`;
    const patched = strategicMergePatch(current(), JSON.parse(body));
    expect(containers(patched)).toEqual([
      { name: "side", image: "busybox:1", command: ["sleep", "1000"], env: [{ name: "A", value: "1" }] },
      { name: "web", image: "busybox:5", command: ["sleep", "1000"] },
    ]);
    expect((patched.metadata as JsonObject).annotations).toEqual({ "kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"v1","kind":"Pod"}\n' });
  });

  test("kubectl set image pod/web web=busybox:2", () => {
    const body = `{"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"web"}],"containers":[{"image":"busybox:2","name":"web"}]}}`;
    expect(containers(strategicMergePatch(current(), JSON.parse(body))).map((c) => c.image)).toEqual(["busybox:1", "busybox:2"]);
  });
});

describe("element order, as apimachinery's normalizeElementOrder gives it", () => {
  const withEnv = (names: string[]): JsonObject => ({ spec: { containers: [{ name: "app", env: names.map((name) => ({ name, value: name.toLowerCase() })) }] } });
  const envNames = (object: JsonObject) => ((containers(object)[0]!.env as JsonObject[]) ?? []).map((e) => e.name);

  test("without $setElementOrder the patch's order wins, a server-only element placed where the server had it", () => {
    const patched = strategicMergePatch(withEnv(["B", "C", "A"]), { spec: { containers: [{ name: "app", env: [{ name: "A", value: "1" }, { name: "B", value: "2" }, { name: "D", value: "3" }] }] } });
    expect(envNames(patched)).toEqual(["C", "A", "B", "D"]);
  });

  test("with $setElementOrder, a deletion and an addition: the server's own elements interleave by their live positions", () => {
    const patched = strategicMergePatch(withEnv(["ENV2", "ENV5", "ENV1", "ENV3", "ENV4"]), {
      spec: {
        containers: [
          {
            name: "app",
            "$setElementOrder/env": [{ name: "ENV1" }, { name: "ENV2" }, { name: "ENV6" }],
            env: [{ $patch: "delete", name: "ENV3" }, { name: "ENV6", value: "new" }],
          },
        ],
      },
    });
    expect(envNames(patched)).toEqual(["ENV5", "ENV1", "ENV2", "ENV6", "ENV4"]);
  });

  test("$setElementOrder alone reorders; names it holds that the list lacks are ignored", () => {
    expect(envNames(strategicMergePatch(withEnv(["B", "A"]), { spec: { containers: [{ name: "app", "$setElementOrder/env": [{ name: "C" }, { name: "A" }, { name: "B" }] }] } }))).toEqual(["A", "B"]);
  });
});
