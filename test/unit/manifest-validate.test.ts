import { describe, expect, test } from "bun:test";
import { formatIssue, ManifestError } from "../../src/manifest/errors.ts";
import { applyPodDefaults } from "../../src/manifest/defaults.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import type { PodSpec } from "../../src/manifest/types.ts";

// Manifests are untyped JSON by nature; the cases edit them freely.
type Json = Record<string, any>;

const context = { file: "web.yaml", source: "/etc/minikubelet/web.yaml", node: "" };

function basePod(): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "demo" },
    spec: {
      containers: [
        {
          name: "web",
          image: "python:3.12",
          command: ["python3", "-m", "http.server"],
          ports: [{ name: "http", containerPort: 8088 }],
        },
      ],
    },
  };
}

const app = (pod: Json): Json => pod.spec.containers[0];
const probe = (handler: Json = { httpGet: { port: "http" } }): Json => ({ ...handler });

/** Validates, returning the rendered issues ([] when the pod is admitted). */
function issuesOf(raw: unknown, node = ""): string[] {
  try {
    validatePod(raw, { ...context, node });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

interface Case {
  name: string;
  edit: (pod: Json) => void;
  /** The exact rendered issue expected; omitted for a manifest that must be admitted. */
  error?: string;
  /** Checks on the admitted pod. */
  check?: (pod: PodSpec) => void;
}

const cases: Case[] = [
  // kind and apiVersion
  { name: "kind Pod is admitted", edit: () => {} },
  { name: "kind Deployment is refused", edit: (p) => (p.kind = "Deployment"), error: 'kind: must be "Pod" (found "Deployment"); only Pods can be static pods' },
  { name: "missing kind is refused", edit: (p) => delete p.kind, error: 'kind: required (must be "Pod")' },
  { name: "apiVersion apps/v1 is refused", edit: (p) => (p.apiVersion = "apps/v1"), error: 'apiVersion: must be "v1" (found "apps/v1")' },

  // metadata
  { name: "a dotted pod name is a valid subdomain", edit: (p) => (p.metadata.name = "web.v2"), check: (pod) => expect(pod.name).toBe("web.v2") },
  { name: "upper case pod name is refused", edit: (p) => (p.metadata.name = "Web_1"), error: 'metadata.name: "Web_1" must be a DNS-1123 subdomain: lower case letters, digits, \'-\' and \'.\', starting and ending with a letter or digit' },
  { name: "a name that escapes a directory is refused", edit: (p) => (p.metadata.name = "../x"), error: 'metadata.name: "../x" must be a DNS-1123 subdomain: lower case letters, digits, \'-\' and \'.\', starting and ending with a letter or digit' },
  { name: "a name with a slash is refused", edit: (p) => (p.metadata.name = "a/b"), error: 'metadata.name: "a/b" must be a DNS-1123 subdomain: lower case letters, digits, \'-\' and \'.\', starting and ending with a letter or digit' },
  { name: "missing name is refused", edit: (p) => delete p.metadata.name, error: "metadata.name: required" },
  { name: "missing metadata is refused", edit: (p) => delete p.metadata, error: "metadata: required" },
  { name: "namespace defaults to default", edit: (p) => delete p.metadata.namespace, check: (pod) => expect(pod.key).toBe("default/web") },
  { name: "a dotted namespace is refused (labels have no dots)", edit: (p) => (p.metadata.namespace = "a.b"), error: 'metadata.namespace: "a.b" must be a DNS-1123 label: lower case letters, digits and \'-\', starting and ending with a letter or digit' },
  { name: "a namespace that escapes a directory is refused", edit: (p) => (p.metadata.namespace = "../etc"), error: 'metadata.namespace: "../etc" must be a DNS-1123 label: lower case letters, digits and \'-\', starting and ending with a letter or digit' },
  { name: "labels are kept", edit: (p) => (p.metadata.labels = { app: "web", "example.com/tier": "front" }), check: (pod) => expect(pod.labels).toEqual({ app: "web", "example.com/tier": "front" }) },
  { name: "a numeric label value is refused", edit: (p) => (p.metadata.labels = { version: 2 }), error: "metadata.labels.version: must be a string (found number 2)" },
  { name: "annotations must be a map", edit: (p) => (p.metadata.annotations = ["a"]), error: "metadata.annotations: must be an object (found a list)" },

  // containers
  { name: "no containers field is refused", edit: (p) => delete p.spec.containers, error: "spec.containers: required: a pod needs at least one container" },
  { name: "an empty container list is refused", edit: (p) => (p.spec.containers = []), error: "spec.containers: must have at least one container" },
  { name: "containers as a map is refused", edit: (p) => (p.spec.containers = { web: {} }), error: "spec.containers: must be a list (found an object)" },
  { name: "a container that is a string is refused", edit: (p) => (p.spec.containers = ["web"]), error: 'spec.containers[0]: must be an object (found string "web")' },
  { name: "spec as a string is refused", edit: (p) => (p.spec = "x"), error: 'spec: must be an object (found string "x")' },
  { name: "upper case container name is refused", edit: (p) => (app(p).name = "Web"), error: 'spec.containers[0].name: "Web" must be a DNS-1123 label: lower case letters, digits and \'-\', starting and ending with a letter or digit' },
  { name: "a dotted container name is refused", edit: (p) => (app(p).name = "web.1"), error: 'spec.containers[0].name: "web.1" must be a DNS-1123 label: lower case letters, digits and \'-\', starting and ending with a letter or digit' },
  {
    name: "a container name used by an init container is refused",
    edit: (p) => (p.spec.initContainers = [{ name: "web", image: "busybox" }]),
    error: 'spec.containers[0].name: duplicate container name "web" (also spec.initContainers[0].name)',
  },
  {
    name: "two app containers with one name are refused",
    edit: (p) => p.spec.containers.push({ name: "web", image: "busybox" }),
    error: 'spec.containers[1].name: duplicate container name "web" (also spec.containers[0].name)',
  },

  // image and pull policy
  { name: "missing image is refused", edit: (p) => delete app(p).image, error: "spec.containers[0].image: required" },
  { name: "an empty image is refused", edit: (p) => (app(p).image = ""), error: "spec.containers[0].image: required (found an empty string)" },
  { name: "a numeric image is refused", edit: (p) => (app(p).image = 3), error: "spec.containers[0].image: must be a string (found number 3)" },
  { name: "an image with spaces is refused", edit: (p) => (app(p).image = " busybox"), error: 'spec.containers[0].image: must not have leading or trailing whitespace (found " busybox")' },
  { name: "an explicit pull policy is kept", edit: (p) => (app(p).imagePullPolicy = "Never"), check: (pod) => expect(pod.containers[0]!.imagePullPolicy).toBe("Never") },
  { name: "an unknown pull policy is refused", edit: (p) => (app(p).imagePullPolicy = "Sometimes"), error: 'spec.containers[0].imagePullPolicy: must be one of Always, IfNotPresent, Never (found "Sometimes")' },

  // termination message
  { name: "terminationMessagePolicy FallbackToLogsOnError is kept", edit: (p) => (app(p).terminationMessagePolicy = "FallbackToLogsOnError"), check: (pod) => expect(pod.containers[0]!.terminationMessagePolicy).toBe("FallbackToLogsOnError") },
  { name: "terminationMessagePolicy File is the default", edit: (p) => (app(p).terminationMessagePolicy = "File"), check: (pod) => expect(pod.containers[0]!.terminationMessagePolicy).toBeUndefined() },
  { name: "an unknown terminationMessagePolicy is refused", edit: (p) => (app(p).terminationMessagePolicy = "Logs"), error: 'spec.containers[0].terminationMessagePolicy: must be one of File, FallbackToLogsOnError (found "Logs")' },
  { name: "a relative terminationMessagePath is taken from the container's root, as the kubelet does", edit: (p) => (app(p).terminationMessagePath = "tmp/done"), check: (pod) => expect(pod.containers[0]!.terminationMessagePath).toBe("/tmp/done") },

  // command and args
  { name: "command and args are lists of strings", edit: (p) => (app(p).args = ["8088"]), check: (pod) => expect(pod.containers[0]!.args).toEqual(["8088"]) },
  { name: "command as a string is refused", edit: (p) => (app(p).command = "python3 -m http.server"), error: 'spec.containers[0].command: must be a list (found string "python3 -m http.server")' },
  { name: "a number in args is refused", edit: (p) => (app(p).args = ["--port", 8088]), error: "spec.containers[0].args[1]: must be a string (found number 8088)" },

  // restart policy
  { name: "restartPolicy OnFailure is admitted", edit: (p) => (p.spec.restartPolicy = "OnFailure"), check: (pod) => expect(pod.restartPolicy).toBe("OnFailure") },
  { name: "restartPolicy defaults to Always", edit: () => {}, check: (pod) => expect(pod.restartPolicy).toBe("Always") },
  { name: "an unknown restartPolicy is refused", edit: (p) => (p.spec.restartPolicy = "Sometimes"), error: 'spec.restartPolicy: must be one of Always, OnFailure, Never (found "Sometimes")' },

  // env
  { name: "env names and string values are admitted", edit: (p) => (app(p).env = [{ name: "my.var-1", value: "x" }, { name: "EMPTY" }]), check: (pod) => expect(pod.containers[0]!.env).toEqual([{ name: "my.var-1", value: "x" }, { name: "EMPTY", value: "" }]) },
  { name: "an env name starting with a digit is refused", edit: (p) => (app(p).env = [{ name: "1X", value: "x" }]), error: 'spec.containers[0].env[0].name: "1X" is not a valid environment variable name: letters, digits, \'_\', \'-\' and \'.\', not starting with a digit' },
  { name: "an env name with '=' is refused", edit: (p) => (app(p).env = [{ name: "A=B", value: "x" }]), error: 'spec.containers[0].env[0].name: "A=B" is not a valid environment variable name: letters, digits, \'_\', \'-\' and \'.\', not starting with a digit' },
  { name: "a numeric env value is refused", edit: (p) => (app(p).env = [{ name: "PORT", value: 8088 }]), error: "spec.containers[0].env[0].value: must be a string (found number 8088); quote it" },
  { name: "env valueFrom secretKeyRef is refused with the reason", edit: (p) => (app(p).env = [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "pw" } } }]), error: "spec.containers[0].env[0].valueFrom.secretKeyRef: Forbidden: static pods cannot reference ConfigMaps or Secrets: use value, fieldRef or resourceFieldRef, or create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets" },
  { name: "env valueFrom fileKeyRef (Kubernetes 1.34+) is refused by name", edit: (p) => (app(p).env = [{ name: "CONFIG", valueFrom: { fileKeyRef: { volumeName: "cfg", path: "app.env", key: "CONFIG" } } }]), error: "spec.containers[0].env[0].valueFrom.fileKeyRef: not supported by this agent: a variable read from a file in an emptyDir volume (EnvFiles, Kubernetes 1.34+) is not implemented; use value, fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef" },
  { name: "envFrom is refused with the reason", edit: (p) => (app(p).envFrom = [{ configMapRef: { name: "c" } }]), error: "spec.containers[0].envFrom: not supported: static pods cannot reference ConfigMaps or Secrets: create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets" },

  // tolerations and affinity, as the API server checks them
  { name: "a toleration of every NoExecute taint for a while is admitted", edit: (p) => (p.spec.tolerations = [{ operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 }, { key: "node.kubernetes.io/unreachable", operator: "Exists" }, { key: "dedicated", value: "gpu", effect: "NoSchedule" }]) },
  { name: "a toleration's operator is Equal or Exists", edit: (p) => (p.spec.tolerations = [{ key: "k", operator: "Matches", value: "v" }]), error: 'spec.tolerations[0].operator: Unsupported value: "Matches": supported values: "Equal", "Exists"' },
  { name: "a toleration's effect is one of the taint effects", edit: (p) => (p.spec.tolerations = [{ key: "k", operator: "Exists", effect: "NoRun" }]), error: 'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"' },
  { name: "tolerationSeconds only with NoExecute", edit: (p) => (p.spec.tolerations = [{ key: "k", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 10 }]), error: "spec.tolerations[0].effect: effect must be 'NoExecute' when `tolerationSeconds` is set" },
  { name: "a toleration without a key must be Exists", edit: (p) => (p.spec.tolerations = [{ value: "v" }]), error: 'spec.tolerations[0].operator: operator must be Exists when `key` is empty, which means "match all values and all keys"' },
  { name: "Exists takes no value", edit: (p) => (p.spec.tolerations = [{ key: "k", operator: "Exists", value: "v" }]), error: "spec.tolerations[0].operator: value must be empty when `operator` is 'Exists'" },
  { name: "a node affinity's operator is a selector operator", edit: (p) => (p.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disktype", operator: "Equals", values: ["ssd"] }] }] } } }), error: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator' },
  { name: "In needs values", edit: (p) => (p.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "disktype", operator: "In" }] }] } } }), error: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'" },
  { name: "a preferred term's weight is 1 to 100", edit: (p) => (p.spec.affinity = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: { matchExpressions: [{ key: "zone", operator: "Exists" }] } }] } }), error: "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100" },
  { name: "a pod affinity term needs a topologyKey", edit: (p) => (p.spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: "web" } } }] } }), error: "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty" },
  { name: "a pod affinity of the docs is admitted", edit: (p) => (p.spec.affinity = { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: "security", operator: "In", values: ["S2"] }] }, topologyKey: "topology.kubernetes.io/zone" } }] } }) },
  { name: "an affinity of the wrong type is refused", edit: (p) => (p.spec.affinity = "anywhere"), error: 'spec.affinity: must be an object (found string "anywhere")' },

  // ports
  { name: "protocol defaults to TCP", edit: () => {}, check: (pod) => expect(pod.containers[0]!.ports).toEqual([{ name: "http", containerPort: 8088, protocol: "TCP" }]) },
  { name: "port 0 is refused", edit: (p) => (app(p).ports[0].containerPort = 0), error: "spec.containers[0].ports[0].containerPort: must be greater than or equal to 1 (found 0)" },
  { name: "port 65536 is refused", edit: (p) => (app(p).ports[0].containerPort = 65536), error: "spec.containers[0].ports[0].containerPort: must be less than or equal to 65535 (found 65536)" },
  { name: "a quoted port number is refused", edit: (p) => (app(p).ports[0].containerPort = "8088"), error: 'spec.containers[0].ports[0].containerPort: must be an integer (found string "8088")' },
  { name: "an unknown protocol is refused", edit: (p) => (app(p).ports[0].protocol = "HTTP"), error: 'spec.containers[0].ports[0].protocol: must be one of TCP, UDP, SCTP (found "HTTP")' },
  { name: "a port name over 15 characters is refused", edit: (p) => (app(p).ports[0].name = "a-very-long-port-name"), error: 'spec.containers[0].ports[0].name: port name "a-very-long-port-name" must be no more than 15 characters' },
  { name: "a duplicate port name is refused", edit: (p) => app(p).ports.push({ name: "http", containerPort: 9090 }), error: 'spec.containers[0].ports[1].name: duplicate port name "http"' },

  // probes: handler
  { name: "a probe with one handler is admitted", edit: (p) => (app(p).livenessProbe = probe()) },
  { name: "a probe without a handler is refused", edit: (p) => (app(p).livenessProbe = { periodSeconds: 5 }), error: "spec.containers[0].livenessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found none)" },
  { name: "a probe with two handlers is refused", edit: (p) => (app(p).readinessProbe = { exec: { command: ["true"] }, tcpSocket: { port: 8088 } }), error: "spec.containers[0].readinessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found exec, tcpSocket)" },
  { name: "a grpc probe without a service asks about the whole server", edit: (p) => (app(p).livenessProbe = { grpc: { port: 9000 } }), check: (pod) => expect(pod.containers[0]!.livenessProbe!.handler).toEqual({ type: "grpc", port: 9000, service: "" }) },
  { name: "a grpc probe's service is the request's", edit: (p) => (app(p).readinessProbe = { grpc: { port: 9000, service: "db" } }), check: (pod) => expect(pod.containers[0]!.readinessProbe!.handler).toEqual({ type: "grpc", port: 9000, service: "db" }) },
  { name: "a grpc probe needs a port", edit: (p) => (app(p).livenessProbe = { grpc: { service: "db" } }), error: "spec.containers[0].livenessProbe.grpc.port: required" },
  { name: "a grpc port of 0 is refused", edit: (p) => (app(p).livenessProbe = { grpc: { port: 0 } }), error: "spec.containers[0].livenessProbe.grpc.port: must be greater than or equal to 1 (found 0)" },
  { name: "a grpc port of 65536 is refused", edit: (p) => (app(p).livenessProbe = { grpc: { port: 65536 } }), error: "spec.containers[0].livenessProbe.grpc.port: must be less than or equal to 65535 (found 65536)" },
  { name: "a grpc port is a number, never a name", edit: (p) => (app(p).livenessProbe = { grpc: { port: "http" } }), error: 'spec.containers[0].livenessProbe.grpc.port: must be an integer (found string "http")' },
  { name: "grpc beside another handler is two handlers", edit: (p) => (app(p).livenessProbe = { grpc: { port: 9000 }, exec: { command: ["true"] } }), error: "spec.containers[0].livenessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found exec, grpc)" },
  { name: "exec without a command is refused", edit: (p) => (app(p).livenessProbe = { exec: {} }), error: "spec.containers[0].livenessProbe.exec.command: required" },
  { name: "exec with an empty command is refused", edit: (p) => (app(p).livenessProbe = { exec: { command: [] } }), error: "spec.containers[0].livenessProbe.exec.command: required (found an empty list)" },
  { name: "a probe that is a string is refused", edit: (p) => (app(p).livenessProbe = "http"), error: 'spec.containers[0].livenessProbe: must be an object (found string "http")' },

  // probes: ports
  { name: "a named httpGet port resolves to its number", edit: (p) => (app(p).readinessProbe = probe()), check: (pod) => expect(pod.containers[0]!.readinessProbe!.handler).toMatchObject({ port: 8088, portName: "http" }) },
  { name: "a named tcpSocket port resolves to its number", edit: (p) => (app(p).livenessProbe = { tcpSocket: { port: "http" } }), check: (pod) => expect(pod.containers[0]!.livenessProbe!.handler).toEqual({ type: "tcpSocket", host: "", port: 8088, portName: "http" }) },
  { name: "an unknown port name is refused", edit: (p) => (app(p).readinessProbe = probe({ httpGet: { port: "htp" } })), error: 'spec.containers[0].readinessProbe.httpGet.port: no port named "htp" in spec.containers[0].ports (names: http)' },
  { name: "a missing probe port is refused", edit: (p) => (app(p).readinessProbe = probe({ tcpSocket: {} })), error: "spec.containers[0].readinessProbe.tcpSocket.port: required" },
  { name: "a probe port of 70000 is refused", edit: (p) => (app(p).readinessProbe = probe({ tcpSocket: { port: 70000 } })), error: "spec.containers[0].readinessProbe.tcpSocket.port: must be less than or equal to 65535 (found 70000)" },
  { name: "a quoted probe port number is refused", edit: (p) => (app(p).readinessProbe = probe({ tcpSocket: { port: "8088" } })), error: 'spec.containers[0].readinessProbe.tcpSocket.port: port name "8088" must contain at least one letter; a number must not be quoted' },

  // probes: httpGet fields
  {
    name: "httpGet headers are kept",
    edit: (p) => (app(p).livenessProbe = probe({ httpGet: { port: 8088, path: "/healthz", httpHeaders: [{ name: "X-Probe", value: "1" }] } })),
    check: (pod) => expect(pod.containers[0]!.livenessProbe!.handler).toEqual({ type: "httpGet", scheme: "HTTP", host: "", path: "/healthz", port: 8088, httpHeaders: [{ name: "X-Probe", value: "1" }] }),
  },
  { name: "a header with a bad name is refused", edit: (p) => (app(p).livenessProbe = probe({ httpGet: { port: 8088, httpHeaders: [{ name: "X Probe", value: "1" }] } })), error: 'spec.containers[0].livenessProbe.httpGet.httpHeaders[0].name: "X Probe" is not a valid HTTP header name: letters, digits and \'-\'' },
  { name: "headers as a map are refused", edit: (p) => (app(p).livenessProbe = probe({ httpGet: { port: 8088, httpHeaders: { "X-Probe": "1" } } })), error: "spec.containers[0].livenessProbe.httpGet.httpHeaders: must be a list (found an object)" },
  { name: "an unknown scheme is refused", edit: (p) => (app(p).livenessProbe = probe({ httpGet: { port: 8088, scheme: "FTP" } })), error: 'spec.containers[0].livenessProbe.httpGet.scheme: must be one of HTTP, HTTPS (found "FTP")' },

  // probes: timing
  { name: "liveness successThreshold 2 is refused", edit: (p) => (app(p).livenessProbe = { ...probe(), successThreshold: 2 }), error: "spec.containers[0].livenessProbe.successThreshold: must be 1 for liveness probes (found 2)" },
  { name: "startup successThreshold 2 is refused", edit: (p) => (app(p).startupProbe = { ...probe(), successThreshold: 2 }), error: "spec.containers[0].startupProbe.successThreshold: must be 1 for startup probes (found 2)" },
  { name: "readiness successThreshold 2 is admitted", edit: (p) => (app(p).readinessProbe = { ...probe(), successThreshold: 2 }), check: (pod) => expect(pod.containers[0]!.readinessProbe!.successThreshold).toBe(2) },
  { name: "a negative period is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), periodSeconds: -1 }), error: "spec.containers[0].readinessProbe.periodSeconds: must be greater than or equal to 1 (found -1; 0 means the default, 10)" },
  { name: "a negative failureThreshold is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), failureThreshold: -3 }), error: "spec.containers[0].readinessProbe.failureThreshold: must be greater than or equal to 1 (found -3; 0 means the default, 3)" },
  { name: "a fractional timeout is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), timeoutSeconds: 1.5 }), error: "spec.containers[0].readinessProbe.timeoutSeconds: must be an integer (found number 1.5)" },
  { name: "a negative initialDelay is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), initialDelaySeconds: -1 }), error: "spec.containers[0].readinessProbe.initialDelaySeconds: must be greater than or equal to 0 (found -1)" },
  { name: "a quoted period is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), periodSeconds: "5" }), error: 'spec.containers[0].readinessProbe.periodSeconds: must be an integer (found string "5")' },
  {
    name: "0 takes the API default, as the API server does",
    edit: (p) => (app(p).readinessProbe = { ...probe(), periodSeconds: 0, timeoutSeconds: 0, failureThreshold: 0, successThreshold: 0 }),
    check: (pod) => expect(pod.containers[0]!.readinessProbe).toMatchObject({ periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3, successThreshold: 1 }),
  },
  { name: "probe grace on liveness is kept", edit: (p) => (app(p).livenessProbe = { ...probe(), terminationGracePeriodSeconds: 5 }), check: (pod) => expect(pod.containers[0]!.livenessProbe!.terminationGracePeriodSeconds).toBe(5) },
  { name: "probe grace of 0 is refused", edit: (p) => (app(p).startupProbe = { ...probe(), terminationGracePeriodSeconds: 0 }), error: "spec.containers[0].startupProbe.terminationGracePeriodSeconds: must be greater than or equal to 1 (found 0)" },
  { name: "probe grace on readiness is refused", edit: (p) => (app(p).readinessProbe = { ...probe(), terminationGracePeriodSeconds: 5 }), error: "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: must not be set for readiness probes (only liveness and startup kill the container)" },

  // init containers and sidecars
  { name: "an init container without probes is admitted", edit: (p) => (p.spec.initContainers = [{ name: "init", image: "busybox", command: ["true"] }]), check: (pod) => expect(pod.initContainers.map((c) => c.name)).toEqual(["init"]) },
  { name: "an init container with a probe is refused", edit: (p) => (p.spec.initContainers = [{ name: "init", image: "busybox", readinessProbe: { exec: { command: ["true"] } } }]), error: "spec.initContainers[0].readinessProbe: may not be set for init containers without restartPolicy: Always" },
  { name: "an init container with a preStop hook is refused", edit: (p) => (p.spec.initContainers = [{ name: "init", image: "busybox", lifecycle: { preStop: { sleep: { seconds: 1 } } } }]), error: "spec.initContainers[0].lifecycle: may not be set for init containers without restartPolicy: Always" },
  {
    name: "a sidecar may have probes",
    edit: (p) => (p.spec.initContainers = [{ name: "proxy", image: "busybox", restartPolicy: "Always", startupProbe: { tcpSocket: { port: 15000 } } }]),
    check: (pod) => expect(pod.initContainers[0]).toMatchObject({ restartPolicy: "Always", startupProbe: { handler: { type: "tcpSocket", port: 15000 } } }),
  },
  { name: "an unknown init container restartPolicy is refused", edit: (p) => (p.spec.initContainers = [{ name: "init", image: "busybox", restartPolicy: "Sometimes" }]), error: 'spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"' },
  { name: "an app container's own restartPolicy is kept (KEP-5307)", edit: (p) => (app(p).restartPolicy = "Never"), check: (pod) => expect(pod.containers[0]!.restartPolicy).toBe("Never") },
  { name: "initContainers as a map is refused", edit: (p) => (p.spec.initContainers = { init: {} }), error: "spec.initContainers: must be a list (found an object)" },

  // lifecycle
  { name: "preStop exec is admitted", edit: (p) => (app(p).lifecycle = { preStop: { exec: { command: ["sh", "-c", "sleep 1"] } } }), check: (pod) => expect(pod.containers[0]!.preStop).toEqual({ type: "exec", command: ["sh", "-c", "sleep 1"] }) },
  { name: "preStop sleep is admitted", edit: (p) => (app(p).lifecycle = { preStop: { sleep: { seconds: 3 } } }), check: (pod) => expect(pod.containers[0]!.preStop).toEqual({ type: "sleep", seconds: 3 }) },
  { name: "preStop httpGet resolves its named port", edit: (p) => (app(p).lifecycle = { preStop: { httpGet: { port: "http", path: "/quit" } } }), check: (pod) => expect(pod.containers[0]!.preStop).toMatchObject({ type: "httpGet", port: 8088, path: "/quit" }) },
  { name: "preStop without a handler is refused", edit: (p) => (app(p).lifecycle = { preStop: {} }), error: "spec.containers[0].lifecycle.preStop: needs exactly one of exec, httpGet, sleep (found none)" },
  { name: "preStop with two handlers is refused", edit: (p) => (app(p).lifecycle = { preStop: { exec: { command: ["true"] }, sleep: { seconds: 1 } } }), error: "spec.containers[0].lifecycle.preStop: needs exactly one of exec, httpGet, sleep (found exec, sleep)" },
  { name: "preStop tcpSocket is refused by name", edit: (p) => (app(p).lifecycle = { preStop: { tcpSocket: { port: 8088 } } }), error: "spec.containers[0].lifecycle.preStop.tcpSocket: tcpSocket is deprecated as a lifecycle handler and never runs; use exec, httpGet or sleep" },
  // validateSleepAction: the error is on `sleep`, bounded by the pod's grace (0 allowed since 1.34)
  { name: "a negative preStop sleep is refused", edit: (p) => (app(p).lifecycle = { preStop: { sleep: { seconds: -1 } } }), error: "spec.containers[0].lifecycle.preStop.sleep: -1: must be non-negative and less than terminationGracePeriodSeconds (30)" },
  { name: "a preStop sleep of 0 is admitted", edit: (p) => (app(p).lifecycle = { preStop: { sleep: { seconds: 0 } } }), check: (pod) => expect(pod.containers[0]!.preStop).toEqual({ type: "sleep", seconds: 0 }) },
  { name: "a preStop sleep as long as the grace is admitted", edit: (p) => ((p.spec.terminationGracePeriodSeconds = 5), (app(p).lifecycle = { preStop: { sleep: { seconds: 5 } } })), check: (pod) => expect(pod.containers[0]!.preStop).toEqual({ type: "sleep", seconds: 5 }) },
  { name: "a preStop sleep longer than the grace is refused", edit: (p) => ((p.spec.terminationGracePeriodSeconds = 5), (app(p).lifecycle = { preStop: { sleep: { seconds: 6 } } })), error: "spec.containers[0].lifecycle.preStop.sleep: 6: must be non-negative and less than terminationGracePeriodSeconds (5)" },
  { name: "a preStop sleep without seconds is refused", edit: (p) => (app(p).lifecycle = { preStop: { sleep: {} } }), error: "spec.containers[0].lifecycle.preStop.sleep.seconds: required" },

  // postStart: the same handlers and rules as preStop (validateLifecycle checks both)
  { name: "postStart exec is admitted", edit: (p) => (app(p).lifecycle = { postStart: { exec: { command: ["true"] } } }), check: (pod) => expect(pod.containers[0]!.postStart).toEqual({ type: "exec", command: ["true"] }) },
  { name: "postStart httpGet resolves its named port", edit: (p) => (app(p).lifecycle = { postStart: { httpGet: { port: "http", path: "/warm" } } }), check: (pod) => expect(pod.containers[0]!.postStart).toMatchObject({ type: "httpGet", port: 8088, path: "/warm" }) },
  { name: "postStart sleep of 0 is admitted", edit: (p) => (app(p).lifecycle = { postStart: { sleep: { seconds: 0 } } }), check: (pod) => expect(pod.containers[0]!.postStart).toEqual({ type: "sleep", seconds: 0 }) },
  { name: "postStart and preStop together are admitted", edit: (p) => (app(p).lifecycle = { postStart: { sleep: { seconds: 1 } }, preStop: { sleep: { seconds: 2 } } }), check: (pod) => expect([pod.containers[0]!.postStart, pod.containers[0]!.preStop]).toEqual([{ type: "sleep", seconds: 1 }, { type: "sleep", seconds: 2 }]) },
  { name: "postStart without a handler is refused", edit: (p) => (app(p).lifecycle = { postStart: {} }), error: "spec.containers[0].lifecycle.postStart: needs exactly one of exec, httpGet, sleep (found none)" },
  { name: "postStart with an empty command is refused", edit: (p) => (app(p).lifecycle = { postStart: { exec: { command: [] } } }), error: "spec.containers[0].lifecycle.postStart.exec.command: required (found an empty list)" },
  { name: "postStart tcpSocket is refused by name", edit: (p) => (app(p).lifecycle = { postStart: { tcpSocket: { port: 8088 } } }), error: "spec.containers[0].lifecycle.postStart.tcpSocket: tcpSocket is deprecated as a lifecycle handler and never runs; use exec, httpGet or sleep" },
  { name: "a postStart sleep longer than the grace is refused", edit: (p) => (app(p).lifecycle = { postStart: { sleep: { seconds: 31 } } }), error: "spec.containers[0].lifecycle.postStart.sleep: 31: must be non-negative and less than terminationGracePeriodSeconds (30)" },
  { name: "a postStart on a sidecar is admitted", edit: (p) => (p.spec.initContainers = [{ name: "side", image: "busybox", restartPolicy: "Always", lifecycle: { postStart: { exec: { command: ["true"] } } } }]), check: (pod) => expect(pod.initContainers[0]!.postStart).toEqual({ type: "exec", command: ["true"] }) },
  { name: "a postStart on a plain init container is refused", edit: (p) => (p.spec.initContainers = [{ name: "init", image: "busybox", lifecycle: { postStart: { exec: { command: ["true"] } } } }]), error: "spec.initContainers[0].lifecycle: may not be set for init containers without restartPolicy: Always" },

  // grace period
  { name: "grace period defaults to 30", edit: () => {}, check: (pod) => expect(pod.terminationGracePeriodSeconds).toBe(30) },
  { name: "grace period 0 is admitted", edit: (p) => (p.spec.terminationGracePeriodSeconds = 0), check: (pod) => expect(pod.terminationGracePeriodSeconds).toBe(0) },
  { name: "a negative grace period is refused", edit: (p) => (p.spec.terminationGracePeriodSeconds = -1), error: "spec.terminationGracePeriodSeconds: must be greater than or equal to 0 (found -1)" },
  { name: "a fractional grace period is refused", edit: (p) => (p.spec.terminationGracePeriodSeconds = 2.5), error: "spec.terminationGracePeriodSeconds: must be an integer (found number 2.5)" },

  // stdin and terminal (kubectl run -it sets all three)
  {
    name: "stdin, stdinOnce and tty are read when true, absent otherwise",
    edit: (p) => Object.assign(app(p), { stdin: true, stdinOnce: true, tty: true }),
    check: (pod) => expect(pod.containers[0]).toMatchObject({ stdin: true, stdinOnce: true, tty: true }),
  },
  { name: "stdin false leaves the fields unset", edit: (p) => Object.assign(app(p), { stdin: false }), check: (pod) => expect(["stdin", "stdinOnce", "tty"].filter((key) => key in pod.containers[0]!)).toEqual([]) },
  { name: "a stdin that is no boolean is refused", edit: (p) => (app(p).stdin = "yes"), error: 'spec.containers[0].stdin: must be true or false (found string "yes")' },

  // volumes
  {
    name: "emptyDir and hostPath volumes with mounts are admitted",
    edit: (p) => {
      p.spec.volumes = [{ name: "cache", emptyDir: {} }, { name: "logs", hostPath: { path: "/var/log", type: "Directory" } }];
      app(p).volumeMounts = [{ name: "cache", mountPath: "/cache" }, { name: "logs", mountPath: "/logs", readOnly: true }];
    },
    check: (pod) => {
      expect(pod.volumes).toEqual([{ name: "cache", type: "emptyDir" }, { name: "logs", type: "hostPath", path: "/var/log", hostPathType: "Directory" }]);
      expect(pod.containers[0]!.volumeMounts).toEqual([{ name: "cache", mountPath: "/cache", readOnly: false }, { name: "logs", mountPath: "/logs", readOnly: true }]);
    },
  },
  { name: "a relative hostPath is refused", edit: (p) => (p.spec.volumes = [{ name: "logs", hostPath: { path: "var/log" } }]), error: 'spec.volumes[0].hostPath.path: must be an absolute path (found "var/log")' },
  {
    name: "a Windows path is refused as one: its pod was written for a Windows node",
    edit: (p) => {
      p.spec.volumes = [{ name: "foo", hostPath: { path: "C:\\etc\\foo" } }];
      app(p).volumeMounts = [{ name: "foo", mountPath: "C:\\etc\\foo" }];
    },
    error: 'spec.containers[0].volumeMounts[0].mountPath: must be an absolute path: a Windows path (found "C:\\\\etc\\\\foo") is for a Windows node, and this node runs Linux',
  },
  { name: "a configMap volume is refused", edit: (p) => (p.spec.volumes = [{ name: "cfg", configMap: { name: "c" } }]), error: "spec.volumes[0].configMap: static pods may not reference configmaps (via configmap volumes): create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets" },
  { name: "a projected service account token is refused as the kubelet refuses it", edit: (p) => (p.spec.volumes = [{ name: "tok", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } }]), error: "spec.volumes[0].projected: static pods may not reference serviceaccounts (via projected volumes)" },
  { name: "a nfs volume is not supported (no API object)", edit: (p) => (p.spec.volumes = [{ name: "n", nfs: { server: "s", path: "/" } }]), error: "spec.volumes[0].nfs: nfs volumes are not supported: static pods support only emptyDir, hostPath and downwardAPI" },
  { name: "a secret volume is refused as the kubelet refuses it", edit: (p) => (p.spec.volumes = [{ name: "s", secret: { secretName: "c" } }]), error: "spec.volumes[0].secret: static pods may not reference secrets (via secret volumes): create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets" },
  { name: "a volume with two sources is refused", edit: (p) => (p.spec.volumes = [{ name: "cfg", emptyDir: {}, hostPath: { path: "/srv" } }]), error: "spec.volumes[0]: needs exactly one volume source, emptyDir, hostPath or downwardAPI (found emptyDir, hostPath)" },
  { name: "a mount of an undeclared volume is refused", edit: (p) => (app(p).volumeMounts = [{ name: "cache", mountPath: "/cache" }]), error: 'spec.containers[0].volumeMounts[0].name: no volume named "cache" in spec.volumes' },
  {
    name: "a relative mountPath is refused",
    edit: (p) => {
      p.spec.volumes = [{ name: "cache", emptyDir: {} }];
      app(p).volumeMounts = [{ name: "cache", mountPath: "cache" }];
    },
    error: 'spec.containers[0].volumeMounts[0].mountPath: must be an absolute path (found "cache")',
  },
  {
    name: "a subPath with .. is refused",
    edit: (p) => {
      p.spec.volumes = [{ name: "cache", emptyDir: {} }];
      app(p).volumeMounts = [{ name: "cache", mountPath: "/cache", subPath: "../etc" }];
    },
    error: "spec.containers[0].volumeMounts[0].subPath: must be a relative path without '..' (found \"../etc\")",
  },

  // container defaults
  { name: "terminationMessagePath defaults to /dev/termination-log", edit: () => {}, check: (pod) => expect(pod.containers[0]!.terminationMessagePath).toBe("/dev/termination-log") },
];

describe("validatePod rules", () => {
  for (const testCase of cases) {
    test(testCase.name, () => {
      const raw = basePod();
      testCase.edit(raw);
      const issues = issuesOf(raw);
      if (testCase.error === undefined) {
        expect(issues).toEqual([]);
        testCase.check?.(validatePod(raw, context));
      } else {
        expect(issues).toContain(testCase.error);
      }
    });
  }
});

describe("validatePod: one refusal says one thing", () => {
  test("a mount of a refused volume is not refused again as a mount of an undeclared one (the volume is declared)", () => {
    const raw = basePod();
    raw.spec.volumes = [{ name: "cfg", configMap: { name: "c" } }];
    app(raw).volumeMounts = [{ name: "cfg", mountPath: "/etc/cfg" }];
    expect(issuesOf(raw)).toEqual(["spec.volumes[0].configMap: static pods may not reference configmaps (via configmap volumes): create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets"]);
  });

  test("a static pod with generateName and no name is told that generateName is for pods created through the API", () => {
    const raw = basePod();
    delete raw.metadata.name;
    raw.metadata.generateName = "web-";
    expect(issuesOf(raw)).toEqual(["metadata.name: required: a static pod is named by metadata.name; generateName names only pods created through the agent's API (kubectl create -f FILE)"]);
  });
});

describe("validatePod: pod-level resources, as the API server validates them", () => {
  const withPodResources = (resources: Json, container: Json = {}, init: Json[] = []): Json => {
    const raw = basePod();
    raw.spec.resources = resources;
    app(raw).resources = container;
    if (init.length > 0) raw.spec.initContainers = init;
    return raw;
  };

  test("cpu, memory and hugepages are taken, within the containers' needs", () => {
    expect(issuesOf(withPodResources({ requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "2", memory: "1Gi" } }, { requests: { cpu: "500m" } }))).toEqual([]);
  });

  test("a name no API resource has, or one pod-level resources do not take, is refused in the API server's words", () => {
    expect(issuesOf(withPodResources({ limits: { pids: "2048" } }))).toEqual(['spec.resources.limits[pids]: "pids": must be a standard resource type or fully qualified']);
    expect(issuesOf(withPodResources({ requests: { "ephemeral-storage": "1Gi" } }))).toEqual(['spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"']);
  });

  test("less than the containers request together (sidecars beside the app, an init container beside the sidecars before it) is refused", () => {
    const sidecar = { name: "proxy", image: "busybox", command: ["sleep"], restartPolicy: "Always", resources: { requests: { cpu: "300m" } } };
    const init = { name: "setup", image: "busybox", command: ["true"], resources: { requests: { cpu: "900m" } } };
    // app 500m + sidecar 300m = 800m; the init container after the sidecar needs 900m + 300m = 1200m.
    expect(issuesOf(withPodResources({ requests: { cpu: "1" } }, { requests: { cpu: "500m" } }, [sidecar, init]))).toEqual([
      'spec.resources.requests[cpu]: "1": must be greater than or equal to aggregate container requests of 1200m',
    ]);
    expect(issuesOf(withPodResources({ requests: { cpu: "1200m" } }, { requests: { cpu: "500m" } }, [sidecar, init]))).toEqual([]);
  });

  test("a container's limit above the pod's is refused, at the API server's own path, after the pod's request defaults to what the containers request", () => {
    // The v1.37.2 API server's two causes for this pod, word for word (dry run).
    expect(issuesOf(withPodResources({ limits: { memory: "256Mi" } }, { limits: { memory: "512Mi" } }))).toEqual([
      'spec.resources.requests: "512Mi": must be less than or equal to memory limit of 256Mi',
      'spec.resources.containers[0][memory].limits: "512Mi": must be less than or equal to pod limits of 256Mi',
    ]);
  });

  test("a Windows pod may not set them; claims are refused at pod level", () => {
    const windows = withPodResources({ limits: { cpu: "1" } });
    windows.spec.os = { name: "windows" };
    expect(issuesOf(windows)).toContain("spec.resources: Forbidden: may not be set for a windows pod");
    expect(issuesOf(withPodResources({ claims: [{ name: "gpu" }] }))).toEqual(["spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level"]);
  });
});

describe("validatePod defaults", () => {
  test("probe defaults match the API server's", () => {
    const raw = basePod();
    app(raw).livenessProbe = { httpGet: { port: 8088 } };
    expect(validatePod(raw, context).containers[0]!.livenessProbe).toEqual({
      handler: { type: "httpGet", scheme: "HTTP", host: "", path: "/", port: 8088, httpHeaders: [] },
      initialDelaySeconds: 0,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  const pullPolicies: [string, string][] = [
    ["busybox", "Always"],
    ["busybox:latest", "Always"],
    ["busybox:1.36", "IfNotPresent"],
    ["localhost:5000/busybox", "Always"],
    ["localhost:5000/busybox:1.36", "IfNotPresent"],
    ["busybox@sha256:0123456789abcdef", "IfNotPresent"],
    ["busybox:latest@sha256:0123456789abcdef", "Always"],
  ];
  for (const [image, policy] of pullPolicies) {
    test(`imagePullPolicy for ${image} defaults to ${policy}`, () => {
      const raw = basePod();
      app(raw).image = image;
      expect(validatePod(raw, context).containers[0]!.imagePullPolicy).toBe(policy as "Always");
    });
  }

  test("a volume written without a source is an emptyDir, as SetDefaults_Volume makes it (it used to be refused)", () => {
    const raw = basePod();
    raw.spec.volumes = [{ name: "cfg" }];
    const pod = validatePod(raw, context);
    expect(pod.volumes).toEqual([{ name: "cfg", type: "emptyDir" }]);
    expect((pod.manifest.spec as { volumes: unknown }).volumes).toEqual([{ name: "cfg", emptyDir: {} }]);
  });

  test("an admitted pod carries identity, source and the decoded manifest", () => {
    const raw = basePod();
    const pod = validatePod(raw, { ...context, node: "lab" });
    expect(pod).toMatchObject({ key: "demo/web-lab", name: "web", fullName: "web-lab", namespace: "demo", node: "lab", source: "/etc/minikubelet/web.yaml", hostNetwork: false, shareProcessNamespace: false });
    // Decoded as the API server stores it (defaults applied), the written object left as it was.
    const written = structuredClone(raw);
    expect(pod.manifest).toEqual(applyPodDefaults(raw) as Record<string, unknown>);
    expect(raw).toEqual(written);
    expect(pod.configHash).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("validatePod errors", () => {
  test("every issue is collected, not only the first", () => {
    const raw = basePod();
    raw.kind = "Deployment";
    delete app(raw).image;
    app(raw).livenessProbe = {};
    expect(issuesOf(raw)).toEqual([
      'kind: must be "Pod" (found "Deployment"); only Pods can be static pods',
      "spec.containers[0].image: required",
      "spec.containers[0].livenessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found none)",
    ]);
  });

  test("the message is one line naming the file and the field path", () => {
    const raw = basePod();
    app(raw).livenessProbe = {};
    expect(() => validatePod(raw, context)).toThrow(
      "web.yaml: spec.containers[0].livenessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found none)",
    );
  });

  test("a manifest that is not an object is refused", () => {
    expect(issuesOf(["a"])).toEqual(["must be a Pod object (found a list)"]);
    expect(issuesOf("pod")).toEqual(['must be a Pod object (found string "pod")']);
    expect(issuesOf(null)).toEqual(["must be a Pod object (found null)"]);
  });

  test("a name that is too long once the node is appended is refused", () => {
    const raw = basePod();
    raw.metadata.name = "a".repeat(250);
    expect(issuesOf(raw, "lab")).toEqual([`metadata.name: with node "lab": must be no more than 253 characters (found 254)`]);
    expect(issuesOf(raw)).toEqual([]);
  });
});

/** Every value in a rich manifest, replaced in turn by values of every other type. */
describe("wrong types anywhere give path errors, never a crash", () => {
  function richPod(): Json {
    const raw = basePod();
    raw.metadata.labels = { app: "web" };
    raw.spec.volumes = [{ name: "cache", emptyDir: {} }, { name: "logs", hostPath: { path: "/var/log" } }];
    raw.spec.initContainers = [{ name: "proxy", image: "busybox", restartPolicy: "Always", startupProbe: { tcpSocket: { port: 15000 } } }];
    Object.assign(app(raw), {
      env: [{ name: "A", value: "1" }],
      volumeMounts: [{ name: "cache", mountPath: "/cache" }],
      livenessProbe: { httpGet: { port: "http", httpHeaders: [{ name: "X", value: "y" }] }, terminationGracePeriodSeconds: 3 },
      readinessProbe: { exec: { command: ["true"] } },
      lifecycle: { preStop: { sleep: { seconds: 1 } } },
    });
    return raw;
  }

  function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
    if (typeof value !== "object" || value === null) return [prefix];
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
    return [prefix, ...entries.flatMap(([key, child]) => paths(child, [...prefix, key]))];
  }

  const replacements: unknown[] = [42, -1, 1.5, "x", "", true, null, [], [1], {}, { a: 1 }];
  const all = paths(richPod()).filter((path) => path.length > 0);

  test(`each of ${all.length} fields, with ${replacements.length} wrong values`, () => {
    let refused = 0;
    for (const path of all) {
      for (const replacement of replacements) {
        const raw = richPod();
        let parent: any = raw;
        for (const key of path.slice(0, -1)) parent = parent[key];
        parent[path.at(-1)!] = structuredClone(replacement);
        try {
          validatePod(raw, context);
        } catch (error) {
          if (!(error instanceof ManifestError)) {
            throw new Error(`${path.join(".")} = ${JSON.stringify(replacement)} crashed: ${String(error)}`);
          }
          for (const issue of error.issues) expect(issue.message.length).toBeGreaterThan(0);
          refused++;
        }
      }
    }
    expect(refused).toBeGreaterThan(all.length);
  });
});
