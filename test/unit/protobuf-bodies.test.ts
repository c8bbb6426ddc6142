/**
 * Protobuf request bodies (kubectl 1.32 and later send typed writes so) decode to the object the
 * same write sends as JSON. The bytes are real kubectl's (test/fixtures/kubectl-bodies/README.md):
 * each is checked field by field against what an older kubectl sent as JSON for the same command.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeProtobufObject } from "../../src/api/protobuf/decode-object.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/kubectl-bodies");
const bytes = (file: string) => new Uint8Array(readFileSync(join(FIXTURES, file)));
const json = (file: string) => JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));

/** kubectl picks a random suffix for the names it makes up; the rest must be identical. */
function withoutGeneratedNames(object: unknown): unknown {
  return JSON.parse(JSON.stringify(object).replace(/(node-debugger-lab|debugger)-[a-z0-9]{5}/g, "$1-xxxxx"));
}

describe("kubectl 1.33's protobuf is what kubectl 1.27 sends as JSON", () => {
  const commands = ["debug-node.1", "debug-node-general.1", "debug-copy.1", "debug-copy-replace.1", "debug-copy-replace.2", "create-namespace.1", "auth-can-i.1", "auth-can-i-list.1"];
  for (const name of commands) {
    test(name, () => {
      expect(json(`1.33/${name}.json`).contentType).toBe("application/vnd.kubernetes.protobuf");
      expect(json(`1.27/${name}.json`).contentType).toBe("application/json");
      expect(withoutGeneratedNames(decodeProtobufObject(bytes(`1.33/${name}.bin`)))).toEqual(withoutGeneratedNames(json(`1.27/${name}.bin`)));
    });
  }

  test("auth whoami (kubectl 1.27 asks v1beta1; this is kubectl 1.31's JSON)", () => {
    expect(decodeProtobufObject(bytes("1.33/auth-whoami.1.bin"))).toEqual({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: null },
      status: { userInfo: {} },
    });
  });

  test("the node debugger pod, field by field", () => {
    const pod = decodeProtobufObject(bytes("1.33/debug-node.1.bin")) as any;
    expect(pod.metadata.name).toMatch(/^node-debugger-lab-[a-z0-9]{5}$/);
    expect(pod.spec).toEqual({
      volumes: [{ name: "host-root", hostPath: { path: "/" } }],
      containers: [{ name: "debugger", image: "busybox", command: ["sleep", "60"], resources: {}, volumeMounts: [{ name: "host-root", mountPath: "/host" }], terminationMessagePolicy: "File" }],
      restartPolicy: "Never",
      nodeName: "lab",
      hostNetwork: true,
      hostPID: true,
      hostIPC: true,
      tolerations: [{ operator: "Exists" }],
    });
    expect(pod.status).toEqual({});
  });

  test("the DeleteOptions of debug --replace", () => {
    expect(decodeProtobufObject(bytes("1.33/debug-copy-replace.2.bin"))).toEqual({ kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0 });
  });
});

describe("a pod with every spec field, as kubectl 1.33 encodes it and kubectl 1.31 prints it", () => {
  /** Fields kubectl 1.31 does not know (so it dropped them from its copy), which 1.33 kept. */
  const NEWER_THAN_131 = [
    ["resources"], // pod-level resources, 1.32
    ["securityContext", "seLinuxChangePolicy"], // 1.32
    ["containers", 0, "lifecycle", "stopSignal"], // 1.33
    ["initContainers", 0, "lifecycle", "stopSignal"],
  ] as const;

  for (const mode of ["every", "zero"]) {
    test(`${mode}: every field the two share is identical`, () => {
      const decoded = decodeProtobufObject(bytes(`every-field/${mode}.1.33.bin`)) as any;
      const printed = json(`every-field/${mode}.1.31.json`);
      const served = json(`every-field/${mode}.served.json`);
      for (const path of NEWER_THAN_131) {
        const parent = path.slice(0, -1).reduce((at: any, key) => at[key], decoded.spec);
        const servedParent = path.slice(0, -1).reduce((at: any, key) => at[key], served.spec);
        const last = path[path.length - 1]!;
        if (mode === "every") expect(parent[last]).toEqual(servedParent[last]);
        delete parent[last];
      }
      expect(decoded).toEqual(printed);
    });
  }

  test("every: the spec kubectl read comes back whole (but what debug --copy-to drops or sets)", () => {
    const decoded = decodeProtobufObject(bytes("every-field/every.1.33.bin")) as any;
    const served = json("every-field/every.served.json");
    const { ephemeralContainers: _dropped, shareProcessNamespace: _set, hostnameOverride: _newer, schedulingGroup: _newest, ...spec } = served.spec;
    for (const container of [...spec.containers, ...spec.initContainers]) delete container.restartPolicyRules;
    for (const volume of spec.volumes) delete volume.projected.sources[0].podCertificate;
    for (const container of [...spec.containers, ...spec.initContainers]) for (const env of container.env) delete env.valueFrom.fileKeyRef;
    expect(decoded.spec).toEqual({ ...spec, shareProcessNamespace: false });
  });
});
