/**
 * The kubelet's own server for the agent, started like its API: a failure to listen (a busy port)
 * is one clear line and never stops the agent, whose pods matter more than its endpoints.
 */
import type { ListenAddress } from "../api/server.ts";
import { startKubeletServer, type RunningKubeletServer, type StartKubeletServerOptions } from "../server/start.ts";
import { formatListen, listenFailure } from "./api.ts";

export function startAgentKubeletServer(options: Omit<StartKubeletServerOptions, "listen"> & { listen: ListenAddress | undefined }): RunningKubeletServer | { failure: string } | undefined {
  const { listen } = options;
  if (!listen) return undefined;
  try {
    return startKubeletServer({ ...options, listen });
  } catch (error) {
    const code = (error as { code?: string })?.code;
    return { failure: code ? `cannot listen on ${formatListen(listen)}: ${listenFailure(code, error)}` : (error as Error)?.message ?? String(error) };
  }
}
