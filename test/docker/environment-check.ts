/**
 * Run as a script by helpers.ts: prints, as JSON, why the docker tests cannot run here (no engine
 * answering, an image missing, no registry), with undefined fields for what is ready. Every check
 * has its own deadline, so the answer always comes.
 */
import Dockerode from "dockerode";
import { useFetchTransport } from "../../src/runtime/docker/docker-transport.ts";

/** Built by ./scripts/docker-env up. */
export const BUSYBOX = "minikubelet-test/busybox:1";
export const PAUSE = "registry.k8s.io/pause:3.10";
export const REGISTRY = "127.0.0.1:5000";

export interface EnvironmentReport {
  /** Why the engine or its images are not ready. */
  engine?: string;
  /** Why the registry (or the engine before it) is not ready. */
  registry?: string;
}

const CHECK_TIMEOUT_MS = 3000;

async function missingEngine(): Promise<string | undefined> {
  const where = process.env.DOCKER_HOST ?? "/var/run/docker.sock";
  const docker = useFetchTransport(new Dockerode(), { requestTimeoutMs: CHECK_TIMEOUT_MS });
  try {
    await docker.ping();
  } catch (error) {
    return `no docker engine answers at ${where} (${(error as Error).message}); run ./scripts/docker-env up`;
  }
  for (const image of [BUSYBOX, PAUSE]) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      return `image ${image} is missing; run ./scripts/docker-env up`;
    }
  }
  return undefined;
}

async function missingRegistry(): Promise<string | undefined> {
  try {
    const response = await fetch(`http://${REGISTRY}/v2/`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    if (response.ok) return undefined;
    return `the registry on ${REGISTRY} answers ${response.status}; run ./scripts/docker-env up`;
  } catch (error) {
    return `no registry answers on ${REGISTRY} (${(error as Error).message}); run ./scripts/docker-env up`;
  }
}

async function report(): Promise<EnvironmentReport> {
  const engine = await missingEngine();
  return { engine, registry: engine ?? (await missingRegistry()) };
}

// No top-level await: helpers.ts imports this module for its constants (see checkEnvironment there).
if (import.meta.main) {
  void report().then((found) => {
    process.stdout.write(`${JSON.stringify(found)}\n`);
    process.exit(0);
  });
}
