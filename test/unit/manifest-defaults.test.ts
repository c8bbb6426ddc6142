/**
 * applyPodDefaults against the Go it follows: each case names the SetDefaults_* function of
 * kubernetes pkg/apis/core/v1/defaults.go, or the line of the generated SetObjectDefaults_Pod
 * (zz_generated.defaults.go), that puts the value there, and reads one field of the result.
 */
import { describe, expect, test } from "bun:test";
import { applyPodDefaults } from "../../src/manifest/defaults.ts";

// Manifests are untyped JSON by nature; the cases read them freely.
type Json = Record<string, any>;

const DIGEST = `sha256:${"a".repeat(64)}`;

/** Init container, native sidecar, two app containers, all probe kinds, hooks, ports, env, resources, volumes. */
function richPod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "demo" },
    spec: {
      initContainers: [
        { name: "migrate", image: "busybox:1.36", command: ["sh", "-c", "true"] },
        {
          name: "proxy",
          image: `envoyproxy/envoy@${DIGEST}`,
          restartPolicy: "Always",
          ports: [{ containerPort: 9901 }],
          resources: { limits: { cpu: "1", memory: "256Mi" }, requests: { cpu: "100u" } },
          readinessProbe: { grpc: { port: 9901 } },
          startupProbe: { tcpSocket: { port: 9901 }, failureThreshold: 30 },
          lifecycle: { postStart: { httpGet: { port: 9901 } } },
        },
      ],
      containers: [
        {
          name: "web",
          image: "nginx",
          ports: [{ name: "http", containerPort: 8080 }, { containerPort: 5353, protocol: "UDP" }],
          env: [{ name: "MODE", value: "prod" }, { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
          resources: { limits: { cpu: "0.5", memory: "1024Mi" } },
          livenessProbe: { exec: { command: ["true"] }, timeoutSeconds: 0 },
          readinessProbe: { httpGet: { port: "http" }, periodSeconds: 5 },
          startupProbe: { tcpSocket: { port: 8080 } },
          lifecycle: { preStop: { httpGet: { path: "/drain", port: 8080 } } },
        },
        {
          name: "metrics",
          image: "prom/exporter:latest",
          imagePullPolicy: "Never",
          terminationMessagePolicy: "FallbackToLogsOnError",
          resources: { limits: { cpu: 2 } },
        },
      ],
      volumes: [
        { name: "cache", emptyDir: { medium: "Memory" } },
        { name: "logs", hostPath: { path: "/var/log/web" } },
        { name: "data", hostPath: { path: "/srv", type: "Directory" } },
        { name: "scratch" },
      ],
    },
  };
}

function hostNetworkPod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "edge" },
    spec: {
      hostNetwork: true,
      initContainers: [{ name: "init", image: "busybox:1", ports: [{ containerPort: 7000 }] }],
      containers: [
        { name: "edge", image: "edge:1", ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 19090 }, { name: "none" }, { containerPort: 53, hostPort: 0 }] },
      ],
      ephemeralContainers: [{ name: "debug", image: "busybox", ports: [{ containerPort: 6000 }], resources: { limits: { memory: "0.5Gi" } } }],
    },
  };
}

function explicitPod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "set" },
    spec: {
      dnsPolicy: "Default",
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      securityContext: { runAsUser: 1000 },
      schedulerName: "my-scheduler",
      enableServiceLinks: false,
      containers: [{ name: "c", image: "c:1", terminationMessagePath: "/tmp/msg", resources: { limits: { cpu: "1" }, requests: { cpu: "250m" } } }],
    },
  };
}

function zeroValuePod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "zero" },
    spec: {
      dnsPolicy: "",
      restartPolicy: null,
      securityContext: null,
      terminationGracePeriodSeconds: null,
      containers: [{ name: "c", image: "c:1", imagePullPolicy: "", resources: null, ports: [{ containerPort: 80, protocol: "" }] }],
    },
  };
}

function volumesPod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "vols" },
    spec: {
      containers: [{ name: "c", image: "c:1" }],
      volumes: [
        { name: "secret", secret: { secretName: "s" } },
        { name: "config", configMap: { name: "c", defaultMode: 0 } },
        { name: "down", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        {
          name: "proj",
          projected: {
            sources: [
              { serviceAccountToken: { path: "token" } },
              { downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } },
              { serviceAccountToken: { path: "short", expirationSeconds: 600 } },
            ],
          },
        },
        { name: "nulled", emptyDir: null },
        { name: "iscsi", iscsi: { targetPortal: "10.0.0.1:3260", iqn: "iqn.x", lun: 0 } },
        { name: "rbd", rbd: { monitors: ["10.0.0.2"], image: "img" } },
        { name: "azure", azureDisk: { diskName: "d", diskURI: "u" } },
        { name: "scale", scaleIO: { gateway: "g", system: "s", secretRef: { name: "r" } } },
        { name: "artifact", image: { reference: "registry.example/models:v1" } },
        { name: "claim", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1024Mi" } } } } } },
      ],
    },
  };
}

/** The value at a path such as `spec.containers[0].ports[1].protocol`. */
function at(value: unknown, path: string): unknown {
  let current: any = value;
  for (const key of path.match(/[^.[\]]+/g) ?? []) current = current?.[/^\d+$/.test(key) ? Number(key) : key];
  return current;
}

interface Case {
  /** The Go that makes the value: a SetDefaults_* function or a generated defaulter line. */
  from: string;
  path: string;
  want: unknown;
}

function runCases(title: string, pod: () => Json, cases: Case[]): void {
  describe(title, () => {
    const defaulted = applyPodDefaults(pod());
    for (const { from, path, want } of cases) {
      test(`${from}: ${path} is ${JSON.stringify(want) ?? "absent"}`, () => {
        expect(at(defaulted, path)).toEqual(want);
      });
    }
  });
}

runCases("a pod with an init container, a sidecar and app containers", richPod, [
  { from: "SetDefaults_PodSpec", path: "spec.dnsPolicy", want: "ClusterFirst" },
  { from: "SetDefaults_PodSpec", path: "spec.restartPolicy", want: "Always" },
  { from: "SetDefaults_PodSpec", path: "spec.securityContext", want: {} },
  { from: "SetDefaults_PodSpec", path: "spec.terminationGracePeriodSeconds", want: 30 },
  { from: "SetDefaults_PodSpec", path: "spec.schedulerName", want: "default-scheduler" },
  { from: "SetDefaults_Pod", path: "spec.enableServiceLinks", want: true },

  { from: "SetDefaults_Container (tag 1.36)", path: "spec.initContainers[0].imagePullPolicy", want: "IfNotPresent" },
  { from: "SetDefaults_Container (digest, no tag)", path: "spec.initContainers[1].imagePullPolicy", want: "IfNotPresent" },
  { from: "SetDefaults_Container (no tag)", path: "spec.containers[0].imagePullPolicy", want: "Always" },
  { from: "SetDefaults_Container (explicit kept)", path: "spec.containers[1].imagePullPolicy", want: "Never" },
  { from: "SetDefaults_Container", path: "spec.initContainers[0].terminationMessagePath", want: "/dev/termination-log" },
  { from: "SetDefaults_Container", path: "spec.initContainers[1].terminationMessagePolicy", want: "File" },
  { from: "SetDefaults_Container", path: "spec.containers[0].terminationMessagePolicy", want: "File" },
  { from: "SetDefaults_Container (explicit kept)", path: "spec.containers[1].terminationMessagePolicy", want: "FallbackToLogsOnError" },

  { from: "generated: Ports[j].Protocol == \"\"", path: "spec.containers[0].ports[0]", want: { name: "http", containerPort: 8080, protocol: "TCP" } },
  { from: "generated: Ports[j].Protocol (explicit kept)", path: "spec.containers[0].ports[1].protocol", want: "UDP" },
  { from: "generated: Ports[j].Protocol (sidecar)", path: "spec.initContainers[1].ports[0]", want: { containerPort: 9901, protocol: "TCP" } },

  { from: "generated: Env[j] without valueFrom", path: "spec.containers[0].env[0]", want: { name: "MODE", value: "prod" } },
  { from: "SetDefaults_ObjectFieldSelector", path: "spec.containers[0].env[1].valueFrom.fieldRef", want: { fieldPath: "status.podIP", apiVersion: "v1" } },

  { from: "SetDefaults_ResourceList (0.5, 1024Mi)", path: "spec.containers[0].resources.limits", want: { cpu: "500m", memory: "1Gi" } },
  { from: "SetDefaults_Pod (requests from limits)", path: "spec.containers[0].resources.requests", want: { cpu: "500m", memory: "1Gi" } },
  { from: "SetDefaults_ResourceList (YAML number)", path: "spec.containers[1].resources", want: { limits: { cpu: "2" }, requests: { cpu: "2" } } },
  { from: "SetDefaults_ResourceList (already canonical)", path: "spec.initContainers[1].resources.limits", want: { cpu: "1", memory: "256Mi" } },
  { from: "SetDefaults_ResourceList (100u up to 1m) + SetDefaults_Pod (memory)", path: "spec.initContainers[1].resources.requests", want: { cpu: "1m", memory: "256Mi" } },
  { from: "v1.Container.Resources is a struct: served as {}", path: "spec.initContainers[0].resources", want: {} },

  { from: "SetDefaults_Probe (explicit 0 is defaulted)", path: "spec.containers[0].livenessProbe", want: { exec: { command: ["true"] }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 } },
  { from: "SetDefaults_HTTPGetAction (probe)", path: "spec.containers[0].readinessProbe.httpGet", want: { port: "http", path: "/", scheme: "HTTP" } },
  { from: "SetDefaults_Probe (explicit kept)", path: "spec.containers[0].readinessProbe.periodSeconds", want: 5 },
  { from: "SetDefaults_Probe", path: "spec.containers[0].readinessProbe.failureThreshold", want: 3 },
  { from: "SetDefaults_Probe (tcpSocket has no defaults of its own)", path: "spec.containers[0].startupProbe", want: { tcpSocket: { port: 8080 }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 } },
  { from: "generated: ProbeHandler.GRPC.Service == nil", path: "spec.initContainers[1].readinessProbe.grpc", want: { port: 9901, service: "" } },
  { from: "SetDefaults_Probe (sidecar, explicit kept)", path: "spec.initContainers[1].startupProbe.failureThreshold", want: 30 },
  { from: "SetDefaults_Probe (sidecar)", path: "spec.initContainers[1].startupProbe.timeoutSeconds", want: 1 },
  { from: "SetDefaults_HTTPGetAction (preStop)", path: "spec.containers[0].lifecycle.preStop.httpGet", want: { path: "/drain", port: 8080, scheme: "HTTP" } },
  { from: "SetDefaults_HTTPGetAction (postStart)", path: "spec.initContainers[1].lifecycle.postStart.httpGet", want: { port: 9901, path: "/", scheme: "HTTP" } },

  { from: "SetDefaults_Volume (a source is set)", path: "spec.volumes[0]", want: { name: "cache", emptyDir: { medium: "Memory" } } },
  { from: "SetDefaults_HostPathVolumeSource", path: "spec.volumes[1].hostPath", want: { path: "/var/log/web", type: "" } },
  { from: "SetDefaults_HostPathVolumeSource (explicit kept)", path: "spec.volumes[2].hostPath.type", want: "Directory" },
  { from: "SetDefaults_Volume (no source)", path: "spec.volumes[3]", want: { name: "scratch", emptyDir: {} } },

  { from: "defaultHostNetworkPorts runs only with hostNetwork", path: "spec.containers[0].ports[0].hostPort", want: undefined },
]);

runCases("a pod on the host's network", hostNetworkPod, [
  { from: "SetDefaults_Pod / defaultHostNetworkPorts", path: "spec.containers[0].ports[0].hostPort", want: 8080 },
  { from: "defaultHostNetworkPorts (explicit kept)", path: "spec.containers[0].ports[1].hostPort", want: 19090 },
  { from: "defaultHostNetworkPorts (no containerPort: 0, omitted)", path: "spec.containers[0].ports[2]", want: { name: "none", protocol: "TCP" } },
  { from: "defaultHostNetworkPorts (HostPort == 0)", path: "spec.containers[0].ports[3].hostPort", want: 53 },
  { from: "defaultHostNetworkPorts (InitContainers)", path: "spec.initContainers[0].ports[0].hostPort", want: 7000 },
  { from: "defaultHostNetworkPorts skips EphemeralContainers", path: "spec.ephemeralContainers[0].ports[0]", want: { containerPort: 6000, protocol: "TCP" } },
  { from: "SetDefaults_EphemeralContainer", path: "spec.ephemeralContainers[0].imagePullPolicy", want: "Always" },
  { from: "SetDefaults_EphemeralContainer", path: "spec.ephemeralContainers[0].terminationMessagePath", want: "/dev/termination-log" },
  { from: "SetDefaults_ResourceList (ephemeral, 0.5Gi)", path: "spec.ephemeralContainers[0].resources.limits.memory", want: "512Mi" },
  { from: "SetDefaults_Pod copies no limits for EphemeralContainers", path: "spec.ephemeralContainers[0].resources.requests", want: undefined },
]);

runCases("a pod that sets the defaulted fields itself", explicitPod, [
  { from: "SetDefaults_PodSpec (DNSPolicy == \"\")", path: "spec.dnsPolicy", want: "Default" },
  { from: "SetDefaults_PodSpec (RestartPolicy == \"\")", path: "spec.restartPolicy", want: "Never" },
  { from: "SetDefaults_PodSpec (pointer: explicit 0 kept)", path: "spec.terminationGracePeriodSeconds", want: 0 },
  { from: "SetDefaults_PodSpec (SecurityContext == nil)", path: "spec.securityContext", want: { runAsUser: 1000 } },
  { from: "SetDefaults_PodSpec (SchedulerName == \"\")", path: "spec.schedulerName", want: "my-scheduler" },
  { from: "SetDefaults_Pod (pointer: explicit false kept)", path: "spec.enableServiceLinks", want: false },
  { from: "SetDefaults_Container (TerminationMessagePath == \"\")", path: "spec.containers[0].terminationMessagePath", want: "/tmp/msg" },
  { from: "SetDefaults_Pod (a written request is kept)", path: "spec.containers[0].resources.requests", want: { cpu: "250m" } },
]);

runCases("a pod written with zero values and nulls", zeroValuePod, [
  { from: "SetDefaults_PodSpec (\"\" is unset)", path: "spec.dnsPolicy", want: "ClusterFirst" },
  { from: "SetDefaults_PodSpec (null is unset)", path: "spec.restartPolicy", want: "Always" },
  { from: "SetDefaults_PodSpec (null pointer)", path: "spec.securityContext", want: {} },
  { from: "SetDefaults_PodSpec (null pointer)", path: "spec.terminationGracePeriodSeconds", want: 30 },
  { from: "SetDefaults_Container (\"\" is unset)", path: "spec.containers[0].imagePullPolicy", want: "IfNotPresent" },
  { from: "v1.Container.Resources (null served as {})", path: "spec.containers[0].resources", want: {} },
  { from: "generated: Protocol == \"\"", path: "spec.containers[0].ports[0].protocol", want: "TCP" },
]);

runCases("volumes of every defaulted source", volumesPod, [
  { from: "SetDefaults_SecretVolumeSource", path: "spec.volumes[0].secret.defaultMode", want: 420 },
  { from: "SetDefaults_ConfigMapVolumeSource (pointer: explicit 0 kept)", path: "spec.volumes[1].configMap.defaultMode", want: 0 },
  { from: "SetDefaults_DownwardAPIVolumeSource", path: "spec.volumes[2].downwardAPI.defaultMode", want: 420 },
  { from: "generated: DownwardAPI.Items[j].FieldRef", path: "spec.volumes[2].downwardAPI.items[0].fieldRef.apiVersion", want: "v1" },
  { from: "SetDefaults_ProjectedVolumeSource", path: "spec.volumes[3].projected.defaultMode", want: 420 },
  { from: "SetDefaults_ServiceAccountTokenProjection", path: "spec.volumes[3].projected.sources[0].serviceAccountToken.expirationSeconds", want: 3600 },
  { from: "generated: Projected.Sources[j].DownwardAPI.Items[k].FieldRef", path: "spec.volumes[3].projected.sources[1].downwardAPI", want: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace", apiVersion: "v1" } }] } },
  { from: "SetDefaults_ServiceAccountTokenProjection (explicit kept)", path: "spec.volumes[3].projected.sources[2].serviceAccountToken.expirationSeconds", want: 600 },
  { from: "SetDefaults_Volume (emptyDir: null is no source)", path: "spec.volumes[4]", want: { name: "nulled", emptyDir: {} } },
  { from: "types.go +default (ISCSIVolumeSource)", path: "spec.volumes[5].iscsi.iscsiInterface", want: "default" },
  { from: "types.go +default (RBDVolumeSource)", path: "spec.volumes[6].rbd", want: { monitors: ["10.0.0.2"], image: "img", pool: "rbd", user: "admin", keyring: "/etc/ceph/keyring" } },
  { from: "types.go +default (AzureDiskVolumeSource)", path: "spec.volumes[7].azureDisk", want: { diskName: "d", diskURI: "u", cachingMode: "ReadWrite", fsType: "ext4", readOnly: false, kind: "Shared" } },
  { from: "types.go +default (ScaleIOVolumeSource)", path: "spec.volumes[8].scaleIO.storageMode", want: "ThinProvisioned" },
  { from: "types.go +default (ScaleIOVolumeSource)", path: "spec.volumes[8].scaleIO.fsType", want: "xfs" },
  { from: "SetDefaults_Volume (ImageVolume pull policy)", path: "spec.volumes[9].image.pullPolicy", want: "IfNotPresent" },
  { from: "SetDefaults_Volume (a source is set)", path: "spec.volumes[9].emptyDir", want: undefined },
  { from: "SetDefaults_PersistentVolumeClaimSpec", path: "spec.volumes[10].ephemeral.volumeClaimTemplate.spec.volumeMode", want: "Filesystem" },
  { from: "generated: VolumeClaimTemplate.Spec.Resources.Requests", path: "spec.volumes[10].ephemeral.volumeClaimTemplate.spec.resources.requests.storage", want: "1Gi" },
]);

describe("SetDefaults_ResourceList: quantities rounded up to milli scale, in the served form", () => {
  const quantities: [written: unknown, served: string][] = [
    ["0.5", "500m"],
    ["1024Mi", "1Gi"],
    ["100m", "100m"],
    ["128Mi", "128Mi"],
    ["1e3", "1e3"],
    ["1.5Gi", "1536Mi"],
    ["0.0001", "1m"],
    ["1500u", "2m"],
    ["1n", "1m"],
    ["-1500u", "-2m"],
    [" 2 ", "2"],
    [0.25, "250m"],
    ["0", "0"],
  ];
  for (const [written, served] of quantities) {
    test(`${JSON.stringify(written)} is stored as ${served}`, () => {
      const pod = { kind: "Pod", spec: { containers: [{ name: "c", image: "c:1", resources: { limits: { cpu: written } } }] } };
      const defaulted = applyPodDefaults(pod) as Json;
      expect(defaulted.spec.containers[0].resources).toEqual({ limits: { cpu: served }, requests: { cpu: served } });
    });
  }

  test("generated: SetDefaults_ResourceList(&in.Spec.Overhead) and the container statuses", () => {
    const pod = {
      kind: "Pod",
      spec: { containers: [{ name: "c", image: "c:1" }], overhead: { cpu: "0.25", memory: "1024Ki" } },
      status: { containerStatuses: [{ name: "c", allocatedResources: { cpu: "0.5" }, resources: { limits: { memory: "2048Mi" }, requests: { cpu: "1500u" } } }] },
    };
    const defaulted = applyPodDefaults(pod) as Json;
    expect(defaulted.spec.overhead).toEqual({ cpu: "250m", memory: "1Mi" });
    expect(defaulted.status.containerStatuses[0]).toEqual({ name: "c", allocatedResources: { cpu: "500m" }, resources: { limits: { memory: "2Gi" }, requests: { cpu: "2m" } } });
  });
});

describe("SetDefaults_Container: pull policy by image reference", () => {
  const images: [image: unknown, policy: string | undefined][] = [
    ["nginx", "Always"],
    ["nginx:latest", "Always"],
    ["registry.example:5000/team/nginx", "Always"],
    ["registry.example:5000/team/nginx:1.27", "IfNotPresent"],
    [`nginx@${DIGEST}`, "IfNotPresent"],
    [`nginx:latest@${DIGEST}`, "Always"],
    // ParseImageName("") fails; the tag it returns is "", which is not "latest".
    [undefined, "IfNotPresent"],
    ["", "IfNotPresent"],
    // A number is a wrong shape: left for validation, no policy made up.
    [3, undefined],
  ];
  for (const [image, policy] of images) {
    test(`image ${JSON.stringify(image) ?? "absent"}: ${policy ?? "not defaulted"}`, () => {
      const container: Json = { name: "c" };
      if (image !== undefined) container.image = image;
      const defaulted = applyPodDefaults({ kind: "Pod", spec: { containers: [container] } }) as Json;
      expect(defaulted.spec.containers[0].imagePullPolicy).toEqual(policy);
    });
  }
});

describe("malformed shapes are left as written, and nothing throws", () => {
  const pod = (spec: Json): Json => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "bad" }, spec });
  const cases: { name: string; raw: unknown; check: (defaulted: any) => void }[] = [
    { name: "null", raw: null, check: (d) => expect(d).toBeNull() },
    { name: "a number", raw: 42, check: (d) => expect(d).toBe(42) },
    { name: "a list", raw: [{ kind: "Pod" }], check: (d) => expect(d).toEqual([{ kind: "Pod" }]) },
    { name: "another kind", raw: { kind: "Deployment", spec: { template: {} } }, check: (d) => expect(d).toEqual({ kind: "Deployment", spec: { template: {} } }) },
    { name: "no spec", raw: { kind: "Pod", metadata: { name: "x" } }, check: (d) => expect(d).toEqual({ kind: "Pod", metadata: { name: "x" } }) },
    { name: "spec as a string", raw: { kind: "Pod", spec: "x" }, check: (d) => expect(d.spec).toBe("x") },
    {
      name: "containers as a string",
      raw: pod({ containers: "web" }),
      check: (d) => {
        expect(d.spec.containers).toBe("web");
        expect(d.spec.dnsPolicy).toBe("ClusterFirst");
      },
    },
    {
      name: "a container that is a string, beside a good one",
      raw: pod({ containers: ["web", { name: "ok", image: "ok:1" }] }),
      check: (d) => {
        expect(d.spec.containers[0]).toBe("web");
        expect(d.spec.containers[1].imagePullPolicy).toBe("IfNotPresent");
      },
    },
    { name: "a probe that is a string", raw: pod({ containers: [{ name: "c", image: "c:1", livenessProbe: "true" }] }), check: (d) => expect(d.spec.containers[0].livenessProbe).toBe("true") },
    {
      name: "a probe timing that is a string",
      raw: pod({ containers: [{ name: "c", image: "c:1", readinessProbe: { exec: { command: ["true"] }, timeoutSeconds: "5" } }] }),
      check: (d) => {
        expect(d.spec.containers[0].readinessProbe.timeoutSeconds).toBe("5");
        expect(d.spec.containers[0].readinessProbe.periodSeconds).toBe(10);
      },
    },
    {
      name: "a quantity that does not parse",
      raw: pod({ containers: [{ name: "c", image: "c:1", resources: { limits: { cpu: "lots", memory: "1024Mi" } } }] }),
      // Not copied into requests either: validation names it once, under limits.
      check: (d) => expect(d.spec.containers[0].resources).toEqual({ limits: { cpu: "lots", memory: "1Gi" }, requests: { memory: "1Gi" } }),
    },
    { name: "a null quantity", raw: pod({ containers: [{ name: "c", image: "c:1", resources: { limits: { cpu: null } } }] }), check: (d) => expect(d.spec.containers[0].resources).toEqual({ limits: { cpu: null } }) },
    { name: "resources as a list", raw: pod({ containers: [{ name: "c", image: "c:1", resources: ["big"] }] }), check: (d) => expect(d.spec.containers[0].resources).toEqual(["big"]) },
    { name: "requests as a string", raw: pod({ containers: [{ name: "c", image: "c:1", resources: { limits: { cpu: "1" }, requests: "x" } }] }), check: (d) => expect(d.spec.containers[0].resources).toEqual({ limits: { cpu: "1" }, requests: "x" }) },
    { name: "ports as a map", raw: pod({ containers: [{ name: "c", image: "c:1", ports: { http: 80 } }] }), check: (d) => expect(d.spec.containers[0].ports).toEqual({ http: 80 }) },
    { name: "env items as strings", raw: pod({ containers: [{ name: "c", image: "c:1", env: ["A=1"] }] }), check: (d) => expect(d.spec.containers[0].env).toEqual(["A=1"]) },
    { name: "hostNetwork as a string", raw: pod({ hostNetwork: "true", containers: [{ name: "c", image: "c:1", ports: [{ containerPort: 80 }] }] }), check: (d) => expect(d.spec.containers[0].ports[0].hostPort).toBeUndefined() },
    { name: "a containerPort that is a string", raw: pod({ hostNetwork: true, containers: [{ name: "c", image: "c:1", ports: [{ containerPort: "80" }] }] }), check: (d) => expect(d.spec.containers[0].ports[0]).toEqual({ containerPort: "80", protocol: "TCP" }) },
    { name: "a volume that is a string", raw: pod({ containers: [], volumes: ["cache"] }), check: (d) => expect(d.spec.volumes).toEqual(["cache"]) },
    { name: "a hostPath that is a string", raw: pod({ containers: [], volumes: [{ name: "h", hostPath: "/" }] }), check: (d) => expect(d.spec.volumes[0]).toEqual({ name: "h", hostPath: "/" }) },
    { name: "a Date where a probe belongs", raw: pod({ containers: [{ name: "c", image: "c:1", livenessProbe: new Date(0) }] }), check: (d) => {
        expect(d.spec.containers[0].livenessProbe).toEqual(new Date(0));
        expect(Object.keys(d.spec.containers[0].livenessProbe)).toEqual([]);
      },
    },
    {
      name: "a resource named __proto__ (JSON.parse makes it an own key)",
      raw: JSON.parse('{"kind":"Pod","spec":{"containers":[{"name":"c","image":"c:1","resources":{"limits":{"__proto__":"0.5"}}}]}}'),
      check: (d) => {
        const requests = d.spec.containers[0].resources.requests;
        expect(Object.getPrototypeOf(requests)).toBe(Object.prototype);
        expect(Object.entries(requests)).toEqual([["__proto__", "500m"]]);
      },
    },
  ];
  for (const { name, raw, check } of cases) {
    test(name, () => check(applyPodDefaults(raw)));
  }

  test("nesting deeper than the call stack (JSON.parse takes it) does not throw", () => {
    const depth = 200_000;
    const text = `{"kind":"Pod","spec":{"containers":[{"name":"c","image":"c:1","args":${"[".repeat(depth)}${"]".repeat(depth)}}]}}`;
    const defaulted = applyPodDefaults(JSON.parse(text)) as Json;
    expect(defaulted.spec.containers[0].imagePullPolicy).toBe("IfNotPresent");
  });

  test("a quantity that cannot even be made a string is a wrong shape, not a crash", () => {
    const unprintable = Object.create(Object.create(null));
    const raw = { kind: "Pod", spec: { containers: [{ name: "c", image: "c:1", resources: { limits: { cpu: unprintable } } }] } };
    expect((applyPodDefaults(raw) as Json).spec.containers[0].resources.requests).toBeUndefined();
  });

  test("every field of the rich and volume pods replaced by each wrong value: no throw, still idempotent", () => {
    function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
      if (typeof value !== "object" || value === null) return [prefix];
      const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
      return [prefix, ...entries.flatMap(([key, child]) => paths(child, [...prefix, key]))];
    }
    const replacements: unknown[] = [42, 0, -1, 1.5, "x", "", true, null, [], [1], {}, { a: 1 }];
    for (const base of [richPod, volumesPod]) {
      for (const path of paths(base()).filter((p) => p.length > 0)) {
        for (const replacement of replacements) {
          const raw = base();
          let parent: any = raw;
          for (const key of path.slice(0, -1)) parent = parent[key];
          parent[path.at(-1)!] = structuredClone(replacement);
          const once = applyPodDefaults(raw);
          expect(applyPodDefaults(once)).toEqual(once);
        }
      }
    }
  });
});

describe("contract", () => {
  const fixtures = { richPod, hostNetworkPod, explicitPod, zeroValuePod, volumesPod };

  for (const [name, fixture] of Object.entries(fixtures)) {
    test(`${name}: the input is not mutated, and no part of the result is shared with it`, () => {
      const input = fixture();
      const before = structuredClone(input);
      const defaulted = applyPodDefaults(input) as Json;
      expect(input).toEqual(before);
      expect(defaulted).not.toEqual(before);
      expect(defaulted.spec).not.toBe(input.spec);
      expect(defaulted.spec.containers[0]).not.toBe(input.spec.containers[0]);
    });

    test(`${name}: applying twice gives the same result, keys in the same order`, () => {
      const once = applyPodDefaults(fixture());
      const twice = applyPodDefaults(once);
      expect(twice).toEqual(once);
      expect(JSON.stringify(twice)).toBe(JSON.stringify(once));
    });

    test(`${name}: the result survives JSON unchanged`, () => {
      const defaulted = applyPodDefaults(fixture());
      expect(JSON.parse(JSON.stringify(defaulted))).toEqual(defaulted);
    });
  }

  test("written keys stay where they were; defaulted keys are appended in v1 field order", () => {
    const defaulted = applyPodDefaults(richPod()) as Json;
    expect(Object.keys(defaulted.spec)).toEqual([
      "initContainers", "containers", "volumes",
      "restartPolicy", "terminationGracePeriodSeconds", "dnsPolicy", "securityContext", "schedulerName", "enableServiceLinks",
    ]);
    expect(Object.keys(defaulted.spec.containers[0])).toEqual([
      "name", "image", "ports", "env", "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
      "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    ]);
    expect(Object.keys(defaulted.spec.containers[0].resources)).toEqual(["limits", "requests"]);
  });

  test("a field written as null or \"\" is defaulted in place", () => {
    const defaulted = applyPodDefaults(zeroValuePod()) as Json;
    expect(Object.keys(defaulted.spec).slice(0, 4)).toEqual(["dnsPolicy", "restartPolicy", "securityContext", "terminationGracePeriodSeconds"]);
    expect(Object.keys(defaulted.spec.containers[0])).toEqual(["name", "image", "imagePullPolicy", "resources", "ports", "terminationMessagePath", "terminationMessagePolicy"]);
  });

  test("a shared (YAML alias) container is copied once and defaulted once", () => {
    const shared = { name: "c", image: "c:1" };
    const defaulted = applyPodDefaults({ kind: "Pod", spec: { containers: [shared], initContainers: [shared] } }) as Json;
    expect(shared).toEqual({ name: "c", image: "c:1" });
    expect(defaulted.spec.containers[0].imagePullPolicy).toBe("IfNotPresent");
  });
});

test("pod-level requests are served as the v1.37.2 API server stores them: what the containers request, else the pod's limit", () => {
  const pod = applyPodDefaults({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "q" },
    spec: { resources: { limits: { cpu: "1", memory: "1Gi" } }, containers: [{ name: "a", image: "busybox", resources: { requests: { cpu: "100m" } } }] },
  }) as { spec: { resources: unknown } };
  // The API server's dry run of this pod: {"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m","memory":"1Gi"}}.
  expect(pod.spec.resources).toEqual({ limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "100m", memory: "1Gi" } });
  const requestsOnly = applyPodDefaults({ apiVersion: "v1", kind: "Pod", metadata: { name: "q" }, spec: { resources: { requests: { cpu: "1" } }, containers: [{ name: "a", image: "busybox" }] } }) as { spec: { resources: unknown } };
  expect(requestsOnly.spec.resources).toEqual({ requests: { cpu: "1" } });
});
