/**
 * The agent's API, started so that a failure to listen (a busy port) is one clear line and never
 * stops the agent: its pods matter more than its API.
 */
import type { ListenAddress } from "../api/http/server.ts";
import { startApi, type RunningApi, type StartApiOptions } from "../api/start.ts";
import type { KubeEvent } from "../v1/kube-event.ts";

/**
 * Starts the API, or says in one line why it could not: the agent runs its pods either way, and
 * says so (stderr line, banner, event) once its banner is out.
 */
export function startAgentApi(options: Omit<StartApiOptions, "listen"> & { listen: ListenAddress | undefined }): RunningApi | { failure: string } | undefined {
  return listenOrSayWhy(options.listen, (listen) => startApi({ ...options, listen }));
}

/** `start` on `listen` (nothing when there is none), or one line saying why it could not listen there. */
export function listenOrSayWhy<T>(listen: ListenAddress | undefined, start: (listen: ListenAddress) => T): T | { failure: string } | undefined {
  if (!listen) return undefined;
  try {
    return start(listen);
  } catch (error) {
    const code = (error as { code?: string })?.code;
    return { failure: code ? `cannot listen on ${formatListen(listen)}: ${listenFailure(code, error)}` : (error as Error)?.message ?? String(error) };
  }
}

/**
 * The Warning event on the node for an API that could not start. Like the kubelet's node events,
 * its object is the node, whose uid is its name; the empty pod key marks it as no pod's.
 */
export function apiFailedEvent(nodeName: string, message: string, at: number): KubeEvent {
  return { at, type: "Warning", reason: "APIListenFailed", podKey: "", namespace: "default", pod: nodeName, podUid: nodeName, container: "", message: `Kubernetes API not served: ${message}` };
}

/** `HOST:PORT`, brackets around an IPv6 host. */
export function formatListen(listen: ListenAddress): string {
  return `${listen.hostname.includes(":") ? `[${listen.hostname}]` : listen.hostname}:${listen.port}`;
}

export function listenFailure(code: string, error: unknown): string {
  if (code === "EADDRINUSE") return "the address is already in use";
  if (code === "EADDRNOTAVAIL") return "the address is not one of this host's";
  if (code === "EACCES") return "permission denied";
  return (error as Error)?.message ?? String(error);
}
