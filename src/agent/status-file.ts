/**
 * Writes the pods as a v1 List, atomically: a reader (`get pods -f`, `watch`) never sees half a
 * file, and a crash mid-write leaves the previous version. 0600: each pod's spec carries its env.
 */
import { renameSync, writeFileSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../host/private-files.ts";
import { podList, type V1Pod } from "../v1/v1.ts";

export function writeStatusFile(file: string, pods: V1Pod[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(podList(pods), null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  renameSync(temp, file);
}
