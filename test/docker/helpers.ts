/**
 * What the real-dockerd tests share: the gate (an engine must answer, and under CI=true a missing
 * engine fails the suite instead of skipping it), pod builders with a fresh uid per pod, and cleanup
 * of everything a test created, found by the pod-uid label the runtime puts on it.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "bun:test";
import Dockerode from "dockerode";
import type { ContainerSpec, PodSpec, Volume } from "../../src/manifest/types.ts";
import { DockerRuntime, type DockerRuntimeOptions } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import type { ContainerConfig, Sandbox } from "../../src/runtime/runtime.ts";
import { useFetchTransport } from "../../src/runtime/docker/docker-transport.ts";
import { container } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { describeNeeding } from "../requirements.ts";
import { BUSYBOX, PAUSE, REGISTRY, type EnvironmentReport } from "./environment-check.ts";

export { BUSYBOX, PAUSE, REGISTRY } from "./environment-check.ts";
export const REGISTRY_BUSYBOX = `${REGISTRY}/minikubelet-test/busybox:1`;

/** The tests' own engine client, on the same transport as the runtime (see docker-transport.ts). */
export const docker = useFetchTransport(new Dockerode());

/**
 * Why the docker tests cannot run here (engine, images, registry), asked of a child process: the
 * answer is needed synchronously, to skip or fail describe blocks, and a top-level await in this
 * module put every docker test file on Bun's async module evaluation, which once left a whole CI
 * run hung at loading one of them with nothing pending.
 */
function checkEnvironment(): EnvironmentReport {
  const script = join(import.meta.dir, "environment-check.ts");
  const result = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000 });
  if (result.status === 0) return JSON.parse(result.stdout) as EnvironmentReport;
  const why = result.error?.message ?? (result.stderr.trim() || `exit status ${result.status}`);
  const engine = `the docker environment check (${script}) failed: ${why}`;
  return { engine, registry: engine };
}

const environment = checkEnvironment();
const environmentMissing = environment.engine;
const registryMissing = environment.registry;

/** `describe` for tests that need the engine (and with `needs.registry`, the local registry); see requirements.ts. */
export function describeDocker(name: string, body: () => void, needs: { registry?: boolean } = {}): void {
  describeNeeding(name, needs.registry ? registryMissing : environmentMissing, body);
}

/** A container spec on the local busybox image, running `script` under sh. */
export function bbContainer(name: string, script: string, extra: Partial<ContainerSpec> = {}): ContainerSpec {
  return container(name, { image: BUSYBOX, imagePullPolicy: "IfNotPresent", command: ["sh", "-c", script], ...extra });
}

/** A pod with a uid no other test (or test run) uses, so its containers and names never collide. */
export function testPod(name: string, containers: ContainerSpec[], extra: Partial<PodSpec> = {}): PodSpec {
  const uid = `${randomBytes(4).toString("hex")}-${name}`;
  const fullName = `${name}-dockertest`;
  return {
    key: `minikubelet-test/${fullName}`,
    namespace: "minikubelet-test",
    name,
    fullName,
    node: "dockertest",
    uid,
    configHash: `hash-${uid}`,
    source: `/test/${name}.yaml`,
    labels: {},
    annotations: {},
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 2,
    initContainers: [],
    containers,
    volumes: [] as Volume[],
    hostNetwork: false,
    shareProcessNamespace: false,
    manifest: {},
    ...extra,
  };
}

/** One test's runtime, with a private emptyDir root; `cleanup()` removes everything it made. */
export class DockerTestEnv {
  readonly volumeRoot = mkdtempSync(join(tmpdir(), "minikubelet-docker-test-"));
  readonly runtime: DockerRuntime;
  private readonly pods: PodSpec[] = [];

  constructor(options: DockerRuntimeOptions = {}) {
    this.runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: this.volumeRoot, ...options });
  }

  /** Records the pod for cleanup and runs its sandbox. */
  async sandbox(pod: PodSpec): Promise<Sandbox> {
    this.pods.push(pod);
    return this.runtime.runPodSandbox(pod);
  }

  async start(pod: PodSpec, sandbox: Sandbox, container: ContainerSpec, attempt = 0): Promise<string> {
    const config: ContainerConfig = { pod, container, kind: "app", attempt, sandbox };
    return this.runtime.startContainer(config);
  }

  async cleanup(): Promise<void> {
    await this.runtime.close();
    for (const pod of this.pods) {
      const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${pod.uid}`] } });
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    }
    rmSync(this.volumeRoot, { recursive: true, force: true });
  }
}

/** Resolves with the exit code once the container has exited (the engine's wait, not a poll). */
export async function waitExit(id: string): Promise<number> {
  const result = (await docker.getContainer(id).wait()) as { StatusCode: number };
  return result.StatusCode;
}

/**
 * A loop (the real harness) on a fresh DockerRuntime for each test of the file, and after each the
 * removal of what the pods pushed on `created` left on the engine: containers and labelled volumes.
 */
export function dockerLoopFixture(prefix: string) {
  const fx = {
    volumeRoot: "",
    runtime: undefined as unknown as DockerRuntime,
    h: undefined as unknown as ReturnType<typeof realHarness>,
    created: [] as PodSpec[],
  };
  beforeEach(() => {
    fx.volumeRoot = mkdtempSync(join(tmpdir(), prefix));
    fx.runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: fx.volumeRoot });
    fx.h = realHarness(fx.runtime);
  });
  afterEach(async () => {
    await fx.h.close();
    for (const spec of fx.created.splice(0)) {
      const label = [`${LABEL.podUid}=${spec.uid}`];
      const left = await docker.listContainers({ all: true, filters: { label } });
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      const volumes = (await docker.listVolumes({ filters: { label } })).Volumes ?? [];
      await Promise.all(volumes.map((v) => docker.getVolume(v.Name).remove().catch(() => undefined)));
    }
    rmSync(fx.volumeRoot, { recursive: true, force: true });
  });
  return fx;
}
