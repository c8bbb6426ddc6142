/**
 * What `run` says about itself at start, on stderr: enough to find this agent's process, its state
 * and its containers (pid, database, runtime and its root, node, API address) before the first event.
 * The process runtime's records, when they are on a tmpfs apart from its root, get a line too.
 */

export interface AgentIdentity {
  pid: number;
  database: string;
  runtime: string;
  /** Where the runtime keeps this agent's files (process: pods and monitors; docker: volumes). */
  runtimeRoot: string;
  /** Where the process runtime keeps its containers' records, when not under the root (process-files.ts). */
  runtimeState?: string;
  node: string;
  /** The API's listen address; undefined while the agent serves none. */
  api: string | undefined;
  /** The kubelet server's address; undefined while it serves none. */
  kubelet?: string | undefined;
}

/** One `key  value` line per fact, labels aligned. */
export function startBanner(agent: AgentIdentity): string[] {
  const facts: [string, string][] = [
    ["pid", String(agent.pid)],
    ["database", agent.database],
    ["runtime", agent.runtime],
    ["runtime root", agent.runtimeRoot],
    ...(agent.runtimeState === undefined ? [] : [["runtime state", agent.runtimeState] as [string, string]]),
    ["node", agent.node === "" ? "(none: pods keep their manifest names)" : agent.node],
    ["api", agent.api ?? "off"],
    ["kubelet", agent.kubelet ?? "off"],
  ];
  const width = Math.max(...facts.map(([label]) => label.length)) + 2;
  return facts.map(([label, value]) => `${label.padEnd(width)}${value}`);
}
