/**
 * `minikubelet serve`: the agent's read API from its database alone, with no loop and no runtime
 * (so no exec and no live logs), for looking at a stopped agent's pods and events, or at a running
 * agent's from a second listener. Watches hear the agent's commits through the database's files.
 */
import { nodeNameOf } from "../host/node-name.ts";
import { CommitBroadcast, watchDatabase } from "../api/watch/commit-feed.ts";
import { DEFAULT_API_LISTEN, startApi } from "../api/start.ts";
import { resolveDbPath } from "../store/db-path.ts";
import { formatListen } from "../agent/api.ts";
import { apiListenOption } from "./run/api-listen.ts";
import { UsageError } from "./errors.ts";
import { nodeOption } from "./options.ts";

export interface ServeOptions {
  db?: string;
  apiListen?: string;
  node?: unknown;
}

export async function serveCommand(options: ServeOptions, signal: Promise<void> = untilSignal()): Promise<number> {
  const listen = apiListenOption(options.apiListen ?? DEFAULT_API_LISTEN);
  if (!listen) throw new UsageError("serve needs an address to listen on: --api-listen off leaves it nothing to do");
  const node = nodeNameOf(nodeOption(options.node));
  const dbPath = resolveDbPath(options.db);
  const commits = new CommitBroadcast();
  let api;
  try {
    api = startApi({ dbPath, listen, nodeName: node, commits });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") throw new Error(`cannot listen on ${formatListen(listen)}: the address is already in use`);
    throw error;
  }
  const running = api;
  const watching = watchDatabase(commits, { dbPath, revision: () => running.store.revision() });
  process.stderr.write(`minikubelet: serving the API of ${dbPath} on ${api.url} (minikubelet kubeconfig --db ${dbPath})\n`);
  await signal;
  watching.close();
  await api.stop();
  return 0;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}
