/** `lifecycle.stopSignal` and `spec.os` as the API server validates them (validateStopSignal, validateOS). */
import { describe, expect, test } from "bun:test";
import { formatIssue, ManifestError } from "../../src/manifest/errors.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { issueCause } from "../../src/api/resources/pods/pod-write-status.ts";
import { canonicalSignalName, LINUX_STOP_SIGNALS, signalNumber } from "../../src/manifest/signals.ts";

type Json = Record<string, any>;

function manifest(lifecycle: Json | undefined, os?: Json, extra: Json = {}): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web" },
    spec: { ...(os && { os }), containers: [{ name: "web", image: "busybox", command: ["sleep", "60"], ...(lifecycle && { lifecycle }) }], ...extra },
  };
}

function issues(raw: Json): string[] {
  try {
    validatePod(raw, { file: "web.yaml", source: "/m/web.yaml", node: "" });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

const LINUX_LIST = [...LINUX_STOP_SIGNALS.keys()].sort().map((s) => JSON.stringify(s)).join(", ");

describe("lifecycle.stopSignal", () => {
  const cases: { name: string; raw: Json; error?: string; signal?: string }[] = [
    { name: "needs spec.os", raw: manifest({ stopSignal: "SIGUSR1" }), error: "spec.containers[0].lifecycle.stopSignal: Forbidden: may not be set for containers with empty `spec.os.name`" },
    { name: "a linux signal on a linux pod", raw: manifest({ stopSignal: "SIGUSR1" }, { name: "linux" }), signal: "SIGUSR1" },
    { name: "a real-time form", raw: manifest({ stopSignal: "SIGRTMAX-14" }, { name: "linux" }), signal: "SIGRTMAX-14" },
    { name: "an unknown name, with the supported list", raw: manifest({ stopSignal: "USR1" }, { name: "linux" }), error: `spec.containers[0].lifecycle.stopSignal: Unsupported value: "USR1": supported values: ${LINUX_LIST}` },
    { name: "beyond the real-time range", raw: manifest({ stopSignal: "SIGRTMIN+16" }, { name: "linux" }), error: `spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGRTMIN+16": supported values: ${LINUX_LIST}` },
    { name: "windows allows only SIGTERM and SIGKILL", raw: manifest({ stopSignal: "SIGUSR1" }, { name: "windows" }), error: 'spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGUSR1": supported values: "SIGKILL", "SIGTERM"' },
    { name: "windows SIGKILL", raw: manifest({ stopSignal: "SIGKILL" }, { name: "windows" }), signal: "SIGKILL" },
    { name: "not a string", raw: manifest({ stopSignal: 10 }, { name: "linux" }), error: "spec.containers[0].lifecycle.stopSignal: must be a string (found number 10)" },
    { name: "spec.os without a name", raw: manifest(undefined, {}), error: "spec.os.name: required" },
    { name: "an OS the API does not know", raw: manifest(undefined, { name: "plan9" }), error: 'spec.os.name: Unsupported value: "plan9": supported values: "linux", "windows"' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.error) {
        expect(issues(c.raw)).toEqual([c.error]);
      } else {
        const pod = validatePod(c.raw, { file: "web.yaml", source: "/m/web.yaml", node: "" });
        expect(pod.containers[0]!.stopSignal).toBe(c.signal!);
      }
    });
  }

  test("a plain init container may not set it (its lifecycle is refused as a whole); a sidecar may", () => {
    const init = (restartPolicy?: string) =>
      manifest(undefined, { name: "linux" }, { initContainers: [{ name: "init", image: "busybox", command: ["true"], ...(restartPolicy && { restartPolicy }), lifecycle: { stopSignal: "SIGINT" } }] });
    expect(issues(init())).toEqual(["spec.initContainers[0].lifecycle: may not be set for init containers without restartPolicy: Always"]);
    expect(validatePod(init("Always"), { file: "web.yaml", source: "/m/web.yaml", node: "" }).initContainers[0]!.stopSignal).toBe("SIGINT");
  });

  test("over the API the refusals are the API server's field errors", () => {
    expect(issueCause({ path: ["spec", "containers", 0, "lifecycle", "stopSignal"], message: 'Unsupported value: "X": supported values: "SIGKILL", "SIGTERM"' })).toEqual({
      reason: "FieldValueNotSupported",
      message: 'Unsupported value: "X": supported values: "SIGKILL", "SIGTERM"',
      field: "spec.containers[0].lifecycle.stopSignal",
    });
    expect(issueCause({ path: ["spec", "containers", 0, "lifecycle", "stopSignal"], message: "Forbidden: may not be set for containers with empty `spec.os.name`" }).reason).toBe("FieldValueForbidden");
  });
});

describe("signal numbers", () => {
  test("Linux numbering, the real-time range from 34 to 64", () => {
    expect([signalNumber("SIGTERM"), signalNumber("SIGUSR1"), signalNumber("SIGRTMIN"), signalNumber("SIGRTMIN+15"), signalNumber("SIGRTMAX-14"), signalNumber("SIGRTMAX")]).toEqual([15, 10, 34, 49, 50, 64]);
    expect(LINUX_STOP_SIGNALS.size).toBe(65);
  });

  test("an engine's spellings of an image's STOPSIGNAL read as the canonical name", () => {
    expect(["SIGUSR1", "usr1", "10", "RTMIN+3", "6", "", "SIGNOPE"].map(canonicalSignalName)).toEqual(["SIGUSR1", "SIGUSR1", "SIGUSR1", "SIGRTMIN+3", "SIGABRT", undefined, undefined]);
  });
});

describe("emptyDir medium and sizeLimit", () => {
  const withVolume = (emptyDir: Json) => ({ ...manifest(undefined), spec: { ...manifest(undefined).spec, volumes: [{ name: "scratch", emptyDir }] } });
  const read = (emptyDir: Json) => validatePod(withVolume(emptyDir), { file: "web.yaml", source: "/m/web.yaml", node: "" }).volumes[0];

  test("a memory medium with a limit: the limit as the API server prints it, and in bytes", () => {
    expect(read({ medium: "Memory", sizeLimit: "1Mi" })).toEqual({ name: "scratch", type: "emptyDir", medium: "Memory", sizeLimit: "1Mi", sizeLimitBytes: 1048576 });
    expect(read({ sizeLimit: "1.5M" })).toEqual({ name: "scratch", type: "emptyDir", sizeLimit: "1500k", sizeLimitBytes: 1_500_000 });
  });

  test("zero is no limit", () => {
    expect(read({ sizeLimit: "0" })).toEqual({ name: "scratch", type: "emptyDir" });
  });

  test("refusals: negative (the API server's Forbidden), malformed (its decoding error), an unknown or hugepages medium", () => {
    expect(issues(withVolume({ sizeLimit: "-1Mi" }))).toEqual(["spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"]);
    expect(issues(withVolume({ sizeLimit: "lots" }))).toHaveLength(1);
    expect(issues(withVolume({ sizeLimit: "lots" }))[0]).toStartWith("spec.volumes[0].emptyDir.sizeLimit: quantities must match the regular expression");
    expect(issues(withVolume({ medium: "Disk" }))).toEqual(['spec.volumes[0].emptyDir.medium: unknown storage medium "Disk" (supported: "", "Memory")']);
    expect(issues(withVolume({ medium: "HugePages-2Mi" }))).toEqual(["spec.volumes[0].emptyDir.medium: hugepages-backed emptyDir volumes are not supported by minikubelet"]);
  });
});
