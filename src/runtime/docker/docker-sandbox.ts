/**
 * The pod sandbox over the engine: one pause container per pod uid, under a name derived from the
 * pod (labels.ts), that owns the pod's network and IPC namespaces.
 *
 * A pod start waits on this, so the usual case, no sandbox yet and the pause image present, costs
 * what creating and starting a container costs: a create, a start, and an inspect for the pod IP
 * (none with the host's network). The rarer cases are found from the create's answer instead of
 * asked about first: 409, the name is taken, by this pod's sandbox from before (reused running,
 * replaced dead) or by something this agent did not create (an error); 404, the engine lacks the
 * pause image (pulled, then created again). A list of every labelled container before each create
 * used to cost a round trip whose price grew with the engine's container count.
 *
 * Listing and removing sandboxes go by the labels: only what carries this agent's is touched.
 */
import { rmSync } from "node:fs";
import type Dockerode from "dockerode";
import type { PodSpec } from "../../manifest/types.ts";
import { podVolumeDir, sandboxCreateOptions } from "./docker-container-config.ts";
import { dockerMessage, isConflict, isNotFound, rethrowUnreachable } from "./docker-errors.ts";
import type { DockerImages } from "./docker-images.ts";
import { LABEL } from "../labels.ts";
import { removeMemoryVolumes } from "./docker-memory-volumes.ts";
import type { Sandbox, SandboxInfo } from "../runtime.ts";

export interface SandboxEngine {
  docker: Dockerode;
  images: Pick<DockerImages, "ensureImage">;
  pauseImage: string;
  /** The database identity put on what is created (labels.ts); undefined in tests without one. */
  owner: string | undefined;
  /** Whether labels prove this agent's database created the container. */
  owns(labels: Record<string, string>): boolean;
  /** The label filter for what this agent may list and touch, with `extra` labels. */
  ownLabels(...extra: string[]): string[];
  /** Where the pods' emptyDir volumes are, removed with their sandbox. */
  volumeRoot: string;
  /** Removes a container; already gone is fine. */
  remove(id: string): Promise<void>;
  /** Where the engine is expected, for the error when it does not answer. */
  endpoint(): string;
}

/** Returns the pod's running sandbox, or creates and starts one (replacing a dead one). Idempotent. */
export async function runSandbox(engine: SandboxEngine, pod: PodSpec): Promise<Sandbox> {
  const options = sandboxCreateOptions(pod, engine.pauseImage, engine.owner);
  const name = options.name as string;
  let container: Dockerode.Container;
  try {
    container = await createPause(engine, options);
  } catch (error) {
    if (!isConflict(error)) rethrowUnreachable(error, engine.endpoint());
    const previous = await engine.docker
      .getContainer(name)
      .inspect()
      .catch((inspectError: unknown) => {
        // Removed between the create and the inspect: the name is free again.
        if (isNotFound(inspectError)) return undefined;
        throw inspectError;
      });
    if (previous) {
      const labels = previous.Config.Labels ?? {};
      const thisPods = labels[LABEL.managedBy] === "true" && labels[LABEL.podUid] === pod.uid && labels[LABEL.sandbox] === "true";
      if (!thisPods || !engine.owns(labels)) {
        throw new Error(`pod ${pod.key}: the sandbox name ${name} is taken by a container another agent's database created`, { cause: error });
      }
      if (previous.State.Running) return sandboxOf(previous, pod.uid);
      // A dead sandbox cannot be restarted into the same namespaces: replace it, like the kubelet.
      await engine.remove(previous.Id);
    }
    container = await createPause(engine, options);
  }
  try {
    await container.start();
  } catch (error) {
    await engine.remove(container.id);
    throw new Error(`pod ${pod.key}: starting sandbox (${engine.pauseImage}) failed: ${dockerMessage(error)}`, { cause: error });
  }
  if (pod.hostNetwork) return { id: container.id, ip: "127.0.0.1", podUid: pod.uid };
  return sandboxOf(await container.inspect(), pod.uid);
}

/** Creates the pause container, pulling its image first when the engine answers that it lacks it. */
async function createPause(engine: SandboxEngine, options: Dockerode.ContainerCreateOptions): Promise<Dockerode.Container> {
  try {
    return await engine.docker.createContainer(options);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await engine.images.ensureImage({ image: engine.pauseImage, imagePullPolicy: "IfNotPresent" });
    return engine.docker.createContainer(options);
  }
}

/** Removes the pod's containers, its pause container and its emptyDir volumes (memory ones too); a sandbox already gone is a no-op. */
export async function removeSandbox(engine: SandboxEngine, id: string): Promise<void> {
  let podUid: string | undefined;
  try {
    const info = await engine.docker.getContainer(id).inspect();
    if (!engine.owns(info.Config.Labels ?? {})) throw new Error(`sandbox ${id.slice(0, 12)} was not created by this agent's database: not removed`);
    podUid = info.Config.Labels?.[LABEL.podUid];
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  if (podUid) {
    const members = await engine.docker.listContainers({
      all: true,
      filters: { label: engine.ownLabels(`${LABEL.podUid}=${podUid}`, `${LABEL.sandbox}=false`) },
    });
    await Promise.all(members.map((c) => engine.remove(c.Id)));
  }
  await engine.remove(id);
  if (podUid) {
    await removeMemoryVolumes(engine, podUid);
    rmSync(podVolumeDir(engine.volumeRoot, podUid), { recursive: true, force: true });
  }
}

/** This agent's pause containers, running (ready) or not. */
export async function listSandboxes(engine: SandboxEngine): Promise<SandboxInfo[]> {
  const found = await engine.docker.listContainers({
    all: true,
    filters: { label: engine.ownLabels(`${LABEL.sandbox}=true`) },
  });
  return found.map((c) => ({
    id: c.Id,
    podUid: c.Labels[LABEL.podUid] ?? "",
    ip: sandboxIp(c.HostConfig?.NetworkMode, c.NetworkSettings),
    labels: c.Labels,
    ready: c.State === "running",
  }));
}

/** The sandbox an inspected pause container is: its id and the pod IP. */
export function sandboxOf(info: Dockerode.ContainerInspectInfo, podUid: string): Sandbox {
  return { id: info.Id, ip: sandboxIp(info.HostConfig.NetworkMode, info.NetworkSettings), podUid };
}

/** What the engine says of a container's networks, in an inspect or a list entry (which has no top-level IPAddress). */
export interface EngineNetworkSettings {
  IPAddress?: string;
  Networks?: Record<string, { IPAddress: string }>;
}

/**
 * The pod IP of a pause container: the host's loopback on the host network, else its address on
 * the engine's network (the top-level one of an inspect, else the first network that has one), or
 * "" before it has any.
 */
export function sandboxIp(networkMode: string | undefined, settings: EngineNetworkSettings | undefined): string {
  if (networkMode === "host") return "127.0.0.1";
  const networks = Object.values(settings?.Networks ?? {});
  return settings?.IPAddress || (networks.find((n) => n.IPAddress)?.IPAddress ?? "");
}
