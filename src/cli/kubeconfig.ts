/**
 * `minikubelet kubeconfig`: a kubeconfig for the API of the agent on `--db` (its CA, the address it
 * last listened on, its token, namespace default), so that
 * `minikubelet kubeconfig > ~/.kube/minikubelet && KUBECONFIG=~/.kube/minikubelet kubectl get pods`
 * is the whole set-up.
 */
import { stringify } from "yaml";
import { API_USER } from "../api/api-user.ts";
import { apiDirOf, loadCredentials, readServerAddress } from "../api/tls.ts";
import { resolveDbPath } from "../store/db-path.ts";
import { UserError } from "./errors.ts";

export interface KubeconfigOptions {
  db?: string;
}

export function kubeconfigCommand(options: KubeconfigOptions): number {
  process.stdout.write(kubeconfigText(resolveDbPath(options.db)));
  return 0;
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
