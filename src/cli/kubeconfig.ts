/**
 * `minikubelet kubeconfig`: a kubeconfig for the API of the agent on `--db` (its CA, the address it
 * last listened on, its token, namespace default), so that
 * `minikubelet kubeconfig --output ~/.kube/minikubelet && KUBECONFIG=~/.kube/minikubelet kubectl get pods`
 * is the whole set-up. `--output` writes the file itself, 0600 (it holds the token), where a shell
 * redirect would leave it as the umask says (0644).
 */
import { stringify } from "yaml";
import { API_USER } from "../api/http/api-user.ts";
import { apiDirOf, loadCredentials, readServerAddress } from "../api/http/tls.ts";
import { resolveDbPath } from "../store/db-path.ts";
import { UsageError, UserError } from "./errors.ts";
import { writePrivateFileAtomically } from "../host/private-files.ts";
import { resolve } from "node:path";

export interface KubeconfigOptions {
  db?: string;
  /** Write here (0600, atomically) instead of to stdout. */
  output?: string;
}

export function kubeconfigCommand(options: KubeconfigOptions): number {
  const text = kubeconfigText(resolveDbPath(options.db));
  if (options.output === undefined) {
    process.stdout.write(text);
    return 0;
  }
  // cac reads a numeric value as a number: a file may be called 2.
  if (options.output === "" || typeof options.output === "boolean") throw new UsageError("--output needs a file name");
  const file = resolve(String(options.output));
  try {
    writePrivateFileAtomically(file, text);
  } catch (error) {
    throw new UserError(`cannot write the kubeconfig to ${file}: ${reasonOf(error)}`);
  }
  return 0;
}

/** The errno's reason in words, without the temp file's name that node's message carries. */
function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const reasons: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    EROFS: "read-only file system",
    ENOSPC: "no space left on device",
    ENOTDIR: "a part of the path is not a directory",
    EISDIR: "it is a directory",
    ENOTEMPTY: "it is a directory",
    EEXIST: "a part of the path is not a directory",
  };
  return (code && reasons[code]) ?? (error as Error).message.split("\n")[0] ?? String(error);
}

/** The kubeconfig YAML for the database at `dbPath`; UserError when no API ever listened for it. */
export function kubeconfigText(dbPath: string): string {
  const server = readServerAddress(dbPath);
  let credentials;
  try {
    credentials = loadCredentials(apiDirOf(dbPath));
  } catch {
    credentials = undefined;
  }
  if (!server || !credentials) {
    throw new UserError(`no API has listened for ${dbPath} yet (nothing in ${apiDirOf(dbPath)}): start "minikubelet run" or "minikubelet serve" on it first`);
  }
  const name = "minikubelet";
  // The user is named as the API knows it (`kubectl auth whoami` prints the same name).
  const user = API_USER.username;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server, "certificate-authority-data": Buffer.from(credentials.caPem).toString("base64") } }],
    users: [{ name: user, user: { token: credentials.token } }],
    contexts: [{ name, context: { cluster: name, user, namespace: "default" } }],
    "current-context": name,
  });
}
