import { hostname } from "node:os";

/**
 * The node's name as the API and the pods' `spec.nodeName` give it: `--node`, else the host's name,
 * as the kubelet defaults `--hostname-override`.
 */
export function nodeNameOf(node: string): string {
  return node || hostname();
}
