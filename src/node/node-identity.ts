/**
 * Who the node is to the cluster: its client certificate's subject, as the Node authorizer reads
 * it (CN `system:node:NAME`, O `system:nodes`). `run --kubeconfig` without `--node` takes the name
 * from it, so the Node it registers is the one its credentials may write.
 */
import { X509Certificate } from "node:crypto";

const NODE_USER_PREFIX = "system:node:";

export interface NodeIdentity {
  /** The node name in the certificate's CN, or undefined when the CN is not a node's. */
  node?: string;
  user: string;
  groups: string[];
}

/** The identity in a PEM client certificate (any key type); throws on a PEM that is no certificate. */
export function identityOfCertificate(pem: string): NodeIdentity {
  // One `KEY=value` per line (OpenSSL's one-line-per-entry form).
  const entries = new X509Certificate(pem).subject.split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const);
  const user = entries.find(([key]) => key === "CN")?.[1] ?? "";
  const groups = entries.filter(([key]) => key === "O").map(([, value]) => value);
  return { user, groups, ...(user.startsWith(NODE_USER_PREFIX) && { node: user.slice(NODE_USER_PREFIX.length) }) };
}
