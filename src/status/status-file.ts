/**
 * Writes the pods as a v1 List, atomically: a reader (`get pods -f`, `watch`) never sees half a
 * file, and a crash mid-write leaves the previous version.
 */
import { renameSync, writeFileSync } from "node:fs";
import { podList, type V1Pod } from "./v1.ts";

export function writeStatusFile(file: string, pods: V1Pod[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(podList(pods), null, 2)}\n`);
  renameSync(temp, file);
}
