/** Changing only the group of a file the agent made (the pod's fsGroup on its volumes). */
import { chownSync, statSync } from "node:fs";

/**
 * Gives `path` the group `gid` and keeps its owner. Not `chownSync(path, -1, gid)`: Bun 1.3 passes
 * that -1 on as 4294967294, which makes the owner nobody (a container then sees the volume's
 * directories owned by 4294967294, where the kubelet leaves them root's).
 */
export function chownGroup(path: string, gid: number): void {
  chownSync(path, statSync(path).uid, gid);
}
