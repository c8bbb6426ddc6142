/**
 * The v1 Pod's field names, for the API server's strict field validation: a field the API does not
 * know (`comand:` for `command:`) is silently dropped by a lenient decoder, so the pod runs without
 * it. The API server warns (`unknown field "spec.containers[0].comand"`) or, with
 * fieldValidation=Strict, refuses. Fields minikubelet does not read are still known here: only a
 * name the v1 API lacks is unknown. Objects minikubelet never descends into are "any" (`true`).
 */
import type { FieldPath } from "./errors.ts";
import { isPlainObject } from "./fields.ts";

/** A known object's fields: a nested schema, or `true` for any content (maps, unread objects). */
interface Schema {
  readonly [field: string]: Schema | true;
}

const any = true;

const objectMeta: Schema = {
  name: any, generateName: any, namespace: any, selfLink: any, uid: any, resourceVersion: any, generation: any,
  creationTimestamp: any, deletionTimestamp: any, deletionGracePeriodSeconds: any, labels: any, annotations: any,
  ownerReferences: any, finalizers: any, managedFields: any,
};

const httpGet: Schema = { path: any, port: any, host: any, scheme: any, httpHeaders: { name: any, value: any }, protocol: any };
const tcpSocket: Schema = { port: any, host: any };
const exec: Schema = { command: any };

const probe: Schema = {
  exec, httpGet, tcpSocket, grpc: { port: any, service: any, mode: any },
  initialDelaySeconds: any, timeoutSeconds: any, periodSeconds: any, successThreshold: any, failureThreshold: any,
  terminationGracePeriodSeconds: any,
};

const lifecycleHandler: Schema = { exec, httpGet, tcpSocket, sleep: { seconds: any } };

const securityContext: Schema = {
  capabilities: any, privileged: any, seLinuxOptions: any, windowsOptions: any, runAsUser: any, runAsGroup: any,
  runAsNonRoot: any, readOnlyRootFilesystem: any, allowPrivilegeEscalation: any, procMount: any, seccompProfile: any,
  appArmorProfile: any,
};

const container: Schema = {
  name: any, image: any, command: any, args: any, workingDir: any,
  ports: { name: any, hostPort: any, containerPort: any, protocol: any, hostIP: any },
  envFrom: any, env: { name: any, value: any, valueFrom: any },
  resources: { limits: any, requests: any, claims: any },
  resizePolicy: any, restartPolicy: any, restartPolicyRules: { action: any, exitCodes: { operator: any, values: any } },
  volumeMounts: { name: any, readOnly: any, recursiveReadOnly: any, mountPath: any, subPath: any, mountPropagation: any, subPathExpr: any, bindMountOptions: any },
  volumeDevices: any,
  livenessProbe: probe, readinessProbe: probe, startupProbe: probe,
  lifecycle: { postStart: lifecycleHandler, preStop: lifecycleHandler, stopSignal: any },
  terminationMessagePath: any, terminationMessagePolicy: any, imagePullPolicy: any, securityContext,
  stdin: any, stdinOnce: any, tty: any,
};

const VOLUME_SOURCES = [
  "secret", "configMap", "persistentVolumeClaim", "projected", "downwardAPI", "nfs", "csi", "ephemeral", "image",
  "awsElasticBlockStore", "gcePersistentDisk", "gitRepo", "iscsi", "glusterfs", "rbd", "flexVolume", "cinder", "cephfs",
  "flocker", "fc", "azureFile", "azureDisk", "vsphereVolume", "quobyte", "photonPersistentDisk", "portworxVolume",
  "scaleIO", "storageos",
] as const;

const volume: Schema = {
  name: any,
  emptyDir: { medium: any, sizeLimit: any, mode: any },
  hostPath: { path: any, type: any },
  ...Object.fromEntries(VOLUME_SOURCES.map((source) => [source, any])),
};

const podSecurityContext: Schema = {
  seLinuxOptions: any, windowsOptions: any, runAsUser: any, runAsGroup: any, runAsNonRoot: any, supplementalGroups: any,
  supplementalGroupsPolicy: any, fsGroup: any, sysctls: any, fsGroupChangePolicy: any, seccompProfile: any,
  appArmorProfile: any, seLinuxChangePolicy: any,
};

const podSpec: Schema = {
  volumes: volume, initContainers: container, containers: container, ephemeralContainers: any,
  restartPolicy: any, terminationGracePeriodSeconds: any, activeDeadlineSeconds: any, dnsPolicy: any, nodeSelector: any,
  serviceAccountName: any, serviceAccount: any, automountServiceAccountToken: any, nodeName: any,
  hostNetwork: any, hostPID: any, hostIPC: any, shareProcessNamespace: any, securityContext: podSecurityContext,
  imagePullSecrets: any, hostname: any, hostnameOverride: any, subdomain: any, affinity: any, schedulerName: any, tolerations: any,
  hostAliases: any, priorityClassName: any, priority: any, dnsConfig: any, readinessGates: any, runtimeClassName: any,
  enableServiceLinks: any, preemptionPolicy: any, overhead: any, topologySpreadConstraints: any, setHostnameAsFQDN: any,
  os: any, hostUsers: any, schedulingGates: any, resourceClaims: any, resources: any, schedulingGroup: any, evictionResponders: any,
};

const pod: Schema = { apiVersion: any, kind: any, metadata: objectMeta, spec: podSpec, status: any };

/**
 * Paths of every field of `raw` that the v1 Pod does not have, in document order. A list is
 * checked element by element against its item schema; a value of the wrong type is left to the
 * validator, which names it.
 */
export function unknownFields(raw: unknown): FieldPath[] {
  const found: FieldPath[] = [];
  // Another kind's fields are not a Pod's typos: the kind itself is the problem, and says so.
  if (isPlainObject(raw) && raw.kind !== undefined && raw.kind !== "Pod") return found;
  walk(raw, pod, [], found);
  return found;
}

function walk(value: unknown, schema: Schema, path: FieldPath, found: FieldPath[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, schema, [...path, index], found));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const known = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (known === undefined) found.push([...path, key]);
    else if (known !== true) walk(child, known, [...path, key], found);
  }
}

/**
 * `raw` as the API server keeps it after decoding: the fields the v1 Pod does not have are dropped
 * (a warning names each, unknownFields), the rest is a copy of what was written.
 */
export function withoutUnknownFields(raw: unknown): unknown {
  const copy = structuredClone(raw);
  for (const path of unknownFields(copy)) {
    let node: unknown = copy;
    for (const part of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[part];
    delete (node as Record<string | number, unknown>)[path.at(-1)!];
  }
  return copy;
}
