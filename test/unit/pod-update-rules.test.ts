/** The API server's pod update rules: what may change in a running pod's object, and the words for what may not. */
import { describe, expect, test } from "bun:test";
import { formatIssue } from "../../src/manifest/errors.ts";
import { POD_UPDATE_FORBIDDEN, podUpdateIssues } from "../../src/manifest/pod-update.ts";

type Json = Record<string, unknown>;

function pod(spec: Json = {}, metadata: Json = {}): Json {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1", labels: { app: "web" }, ...metadata },
    spec: {
      containers: [{ name: "web", image: "busybox:1", command: ["sleep", "1000"], imagePullPolicy: "IfNotPresent" }],
      initContainers: [{ name: "init", image: "busybox:1", command: ["true"] }],
      tolerations: [{ key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 }],
      restartPolicy: "Always",
      ...spec,
    },
  };
}

const rendered = (current: Json, next: Json) => podUpdateIssues(current, next).map(formatIssue);

describe("pod update rules", () => {
  test("images, labels, annotations, a lower activeDeadlineSeconds and added tolerations may change", () => {
    const next = pod(
      {
        containers: [{ name: "web", image: "busybox:2", command: ["sleep", "1000"], imagePullPolicy: "IfNotPresent" }],
        initContainers: [{ name: "init", image: "busybox:2", command: ["true"] }],
        activeDeadlineSeconds: 30,
        tolerations: [
          { key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 },
          { key: "b", operator: "Exists" },
        ],
      },
      { labels: { app: "web", tier: "front" }, annotations: { note: "x" } },
    );
    expect(rendered(pod(), next)).toEqual([]);
    expect(rendered(pod({ activeDeadlineSeconds: 60 }), pod({ activeDeadlineSeconds: 60 }))).toEqual([]);
  });

  test("a changed command is refused with the API server's message and what changed", () => {
    const next = pod({ containers: [{ name: "web", image: "busybox:1", command: ["sleep", "5"], imagePullPolicy: "IfNotPresent" }] });
    const [issue, ...more] = rendered(pod(), next);
    expect(more).toEqual([]);
    expect(issue).toBe(`spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\n  spec.containers[0].command[1]: "1000" -> "5"`);
    expect(POD_UPDATE_FORBIDDEN).toStartWith("pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,");
  });

  test("an added container, a removed field and a changed restartPolicy are refused too", () => {
    const added = pod({ containers: [...((pod().spec as Json).containers as Json[]), { name: "side", image: "x" }] });
    expect(rendered(pod(), added)[0]).toContain("spec.containers: ");
    expect(rendered(pod(), pod({ restartPolicy: "Never" }))[0]).toEndWith('spec.restartPolicy: "Always" -> "Never"');
    expect(rendered(pod(), pod({ nodeSelector: { disk: "ssd" } }))[0]).toEndWith('spec.nodeSelector: <unset> -> {"disk":"ssd"}');
  });

  test("activeDeadlineSeconds may be set or lowered, never raised or unset", () => {
    expect(rendered(pod({ activeDeadlineSeconds: 30 }), pod({ activeDeadlineSeconds: 60 }))).toEqual([
      "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value",
    ]);
    expect(rendered(pod({ activeDeadlineSeconds: 30 }), pod())).toEqual(["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"]);
  });

  test("a toleration may not be removed or changed, nor its tolerationSeconds raised", () => {
    const message = "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds";
    expect(rendered(pod(), pod({ tolerations: [] }))).toEqual([message]);
    expect(rendered(pod(), pod({ tolerations: [{ key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 90 }] }))).toEqual([message]);
  });

  test("name, namespace and uid are immutable", () => {
    expect(rendered(pod(), pod({}, { uid: "u2" }))).toEqual(['metadata.uid: Invalid value: "u2": field is immutable']);
  });
});
