/**
 * Reading an exec probe's command: what it runs (a shell pipeline, an HTTP client, a language
 * runtime, a database client) and which hosts it calls.
 */

const SHELLS = new Set(["sh", "bash", "ash", "dash", "zsh", "ksh"]);
/** Programs whose start-up alone costs more than a probe should (a runtime, a client with a connection). */
const HEAVY_PROGRAMS = new Set([
  "curl", "wget", "nc", "ncat", "netcat", "python", "python2", "python3", "node", "java", "ruby", "perl", "php",
  "psql", "mysql", "mysqladmin", "redis-cli", "mongo", "mongosh", "cqlsh", "grpcurl",
]);
const NETWORK_CLIENTS = new Set(["curl", "wget", "nc", "ncat", "netcat", "grpcurl"]);
/** Clients that name their server with `-h HOST` or `--host=HOST`. */
const HOST_FLAG_CLIENTS = new Set(["psql", "pg_isready", "mysql", "mysqladmin", "redis-cli", "cqlsh"]);
const LOCAL_HOST = /^(localhost|127\.[0-9.]+|::1|\[::1\]|0\.0\.0\.0|\$\(hostname\)|\$\{?HOSTNAME\}?|\$\{?POD_IP\}?|\$\(POD_IP\))$/i;

/** The command as a shell would read it: a `sh -c` script, or the argv joined. */
export function execCommandText(command: readonly string[]): string {
  const script = shellScript(command);
  return script ?? command.join(" ");
}

function shellScript(command: readonly string[]): string | undefined {
  const [program, flag, script] = command;
  return program && SHELLS.has(basename(program)) && flag === "-c" && script !== undefined ? script : undefined;
}

function basename(program: string): string {
  return program.slice(program.lastIndexOf("/") + 1);
}

function words(command: readonly string[]): string[] {
  return execCommandText(command).split(/[\s;&|()`'"]+/).filter((word) => word !== "");
}

/** What makes the command heavy ("a shell pipeline", "curl"), or undefined for a light one. */
export function heavyCommand(command: readonly string[]): string | undefined {
  const script = shellScript(command);
  if (script !== undefined && /(^|[^|])\|([^|]|$)/.test(script)) return `a shell pipeline ("${script}")`;
  const program = words(command).map(basename).find((word) => HEAVY_PROGRAMS.has(word));
  return program === undefined ? undefined : `${program} ("${execCommandText(command)}")`;
}

/** The hosts other than this container's that the command contacts (URLs, `nc HOST PORT`). */
export function otherHostsCalled(command: readonly string[]): string[] {
  const text = execCommandText(command);
  const hosts = new Set<string>();
  for (const match of text.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/(\[[^\]]+\]|[^/:\s'"?]+)/gi)) hosts.add(match[1]!);
  const list = words(command);
  list.forEach((word, index) => {
    if (HOST_FLAG_CLIENTS.has(basename(word))) {
      const args = list.slice(index + 1);
      const flag = args.findIndex((arg) => arg === "-h" || arg === "--host");
      const joined = args.find((arg) => arg.startsWith("--host=") || arg.startsWith("-h="));
      const host = joined?.slice(joined.indexOf("=") + 1) ?? (flag >= 0 ? args[flag + 1] : undefined);
      if (host) hosts.add(host);
      return;
    }
    if (!NETWORK_CLIENTS.has(basename(word)) || basename(word) === "curl" || basename(word) === "wget") return;
    // Option values (`-w 1`) are numbers; the first other word is the host.
    const host = list.slice(index + 1).find((arg) => !arg.startsWith("-") && !/^\d+$/.test(arg));
    if (host) hosts.add(host);
  });
  return [...hosts].filter((host) => !LOCAL_HOST.test(host));
}
