import { applyPodDefaults } from "../src/manifest/defaults.ts";
import type { ContainerSpec, PodSpec, Probe, ProbeHandler, RestartPolicy } from "../src/manifest/types.ts";

/** Builds validated-looking PodSpecs for loop tests without going through files. */
export function container(name: string, extra: Partial<ContainerSpec> = {}): ContainerSpec {
  return {
    name,
    image: "busybox:1.36",
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", `echo ${name}`],
    args: [],
    env: [],
    ports: [],
    volumeMounts: [],
    terminationMessagePath: "/dev/termination-log",
    ...extra,
  };
}

export function probe(handler: ProbeHandler, extra: Partial<Probe> = {}): Probe {
  return {
    handler,
    initialDelaySeconds: 0,
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
    ...extra,
  };
}

export interface PodOptions {
  name?: string;
  namespace?: string;
  node?: string;
  restartPolicy?: RestartPolicy;
  grace?: number;
  init?: ContainerSpec[];
  containers?: ContainerSpec[];
  /** Changes the config hash and uid, as an edited file would. */
  revision?: number;
}

export function pod(options: PodOptions = {}): PodSpec {
  const name = options.name ?? "web";
  const namespace = options.namespace ?? "demo";
  const node = options.node ?? "lab";
  const fullName = node ? `${name}-${node}` : name;
  const revision = options.revision ?? 1;
  const containers = options.containers ?? [container(name)];
  const restartPolicy = options.restartPolicy ?? "Always";
  const terminationGracePeriodSeconds = options.grace ?? 30;
  const init = options.init ?? [];
  return {
    key: `${namespace}/${fullName}`,
    namespace,
    name,
    fullName,
    node,
    uid: `uid-${name}-${revision}`,
    configHash: `hash-${name}-${revision}`,
    source: `/manifests/${name}.yaml`,
    labels: {},
    annotations: {},
    restartPolicy,
    terminationGracePeriodSeconds,
    initContainers: init,
    containers,
    volumes: [],
    hostNetwork: false,
    shareProcessNamespace: false,
    // What a file of these containers would store: their names, images and commands, with the API's defaults.
    manifest: applyPodDefaults({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace },
      spec: {
        restartPolicy,
        terminationGracePeriodSeconds,
        ...(init.length > 0 && { initContainers: init.map(written) }),
        containers: containers.map(written),
      },
    }) as Record<string, unknown>,
  };
}

/** A container as a manifest writes it. */
function written(spec: ContainerSpec): Record<string, unknown> {
  return {
    name: spec.name,
    image: spec.image,
    ...(spec.command.length > 0 && { command: spec.command }),
    ...(spec.args.length > 0 && { args: spec.args }),
    imagePullPolicy: spec.imagePullPolicy,
    ...(spec.restartPolicy && { restartPolicy: spec.restartPolicy }),
    ...(spec.restartPolicyRules && { restartPolicyRules: spec.restartPolicyRules }),
    ...(spec.resources && { resources: spec.resources }),
    ...(spec.stdin && { stdin: true }),
    ...(spec.stdinOnce && { stdinOnce: true }),
    ...(spec.tty && { tty: true }),
  };
}

export function desired(...pods: PodSpec[]): Map<string, PodSpec> {
  return new Map(pods.map((p) => [p.key, p]));
}
