/**
 * The kubelet's own server for the agent, started like its API: a failure to listen (a busy port)
 * is one clear line and never stops the agent, whose pods matter more than its endpoints.
 */
import type { ListenAddress } from "../api/http/server.ts";
import { startKubeletServer, type RunningKubeletServer, type StartKubeletServerOptions } from "../server/start.ts";
import { listenOrSayWhy } from "./api.ts";

export function startAgentKubeletServer(options: Omit<StartKubeletServerOptions, "listen"> & { listen: ListenAddress | undefined }): RunningKubeletServer | { failure: string } | undefined {
  return listenOrSayWhy(options.listen, (listen) => startKubeletServer({ ...options, listen }));
}
