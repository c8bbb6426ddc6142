/**
 * `--api-listen` for `run` and `serve`, and starting the API so that a failure to listen (a busy
 * port) is one clear line and never stops the agent: its pods matter more than its API.
 */
import { DEFAULT_API_LISTEN, parseListenAddress, startApi, type RunningApi, type StartApiOptions } from "../api/start.ts";
import type { ListenAddress } from "../api/server.ts";
import { UsageError } from "./cli.ts";

/** The listen address, or undefined for `off`; UsageError for a malformed value. */
export function apiListenOption(value: unknown): ListenAddress | undefined {
  const parsed = parseListenAddress(String(value ?? DEFAULT_API_LISTEN));
  if (parsed === "off") return undefined;
  if ("error" in parsed) throw new UsageError(parsed.error);
  return parsed;
}

/** Starts the API, or reports in one line why it could not and returns undefined. */
export function startAgentApi(options: Omit<StartApiOptions, "listen"> & { listen: ListenAddress | undefined }, log: (message: string) => void): RunningApi | undefined {
  const { listen } = options;
  if (!listen) return undefined;
  try {
    return startApi({ ...options, listen, log });
  } catch (error) {
    log(`api: cannot listen on ${formatListen(listen)}: ${listenFailure(error)}; the agent runs on without its API`);
    return undefined;
  }
}

export function formatListen(listen: ListenAddress): string {
  return `${listen.hostname.includes(":") ? `[${listen.hostname}]` : listen.hostname}:${listen.port}`;
}

function listenFailure(error: unknown): string {
  const code = (error as { code?: string })?.code;
  if (code === "EADDRINUSE") return "the address is already in use";
  if (code === "EADDRNOTAVAIL") return "the address is not one of this host's";
  if (code === "EACCES") return "permission denied";
  return (error as Error)?.message ?? String(error);
}
