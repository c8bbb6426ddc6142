/**
 * What `run` says about itself at start, on stderr: enough to find this agent's process, its state
 * and its containers (pid, database, runtime and its root, node, API address) before the first event.
 */

export interface AgentIdentity {
  pid: number;
  database: string;
  runtime: string;
  /** Where the runtime keeps this agent's files (process: pods and monitors; docker: volumes). */
  runtimeRoot: string;
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
    ["node", agent.node === "" ? "(none: pods keep their manifest names)" : agent.node],
    ["api", agent.api ?? "off"],
    ["kubelet", agent.kubelet ?? "off"],
  ];
  const width = Math.max(...facts.map(([label]) => label.length)) + 2;
  return facts.map(([label, value]) => `${label.padEnd(width)}${value}`);
}
