/**
 * The directory source (the kubelet's staticPodPath): every regular `.yaml`, `.yml` or `.json` file
 * directly in the directory is one pod. Like the kubelet's file source, hidden files (an editor's
 * `.web.yaml.swp`) and subfolders are skipped, and a file that does not load is reported and left
 * out, so its pod is stopped like a removed file. Unlike the kubelet, other extensions (`web.yaml.bak`)
 * are skipped too (kubernetes#136962).
 */
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PodKey, PodSpec } from "./types.ts";
import { ManifestError, ManifestSourceError } from "./errors.ts";
import { manifestFormat, readManifestFile } from "./parse.ts";
import { checkNodeName, validatePod } from "./validate.ts";

export interface SourceError {
  /** Absolute path of the file that was dropped. */
  file: string;
  /** One line starting with the file's name: `web.yaml: spec.containers[0].image: required`. */
  message: string;
}

export interface LoadResult {
  pods: Map<PodKey, PodSpec>;
  /** Files that were dropped, in name order. */
  errors: SourceError[];
}

/**
 * Loads one manifest file as a pod.
 * @param displayName the file as it appears in messages (default: its base name).
 * @throws ManifestError when the file cannot be read, decoded or validated.
 */
export function loadManifest(path: string, node = "", displayName?: string): PodSpec {
  const source = resolve(path);
  const file = displayName ?? source.slice(source.lastIndexOf("/") + 1);
  return validatePod(readManifestFile(source, file), { file, source, node });
}

/**
 * Loads every manifest in `dir`, in name order. A second file defining a pod key already loaded is
 * refused (the first file, by name, wins) with a message naming both files.
 * @throws ManifestSourceError when the directory itself cannot be listed (nothing could be read).
 * @throws RangeError when `node` is not a valid node name.
 */
export function loadManifests(dir: string, node = ""): LoadResult {
  const nodeProblem = checkNodeName(node);
  if (nodeProblem) throw new RangeError(`node name: ${nodeProblem}`);
  const root = resolve(dir);
  const pods = new Map<PodKey, PodSpec>();
  const errors: SourceError[] = [];
  for (const name of listManifestFiles(root)) {
    const path = join(root, name);
    try {
      const pod = loadManifest(path, node, name);
      const existing = pods.get(pod.key);
      if (existing) {
        const first = existing.source.slice(existing.source.lastIndexOf("/") + 1);
        errors.push({ file: path, message: `${name}: pod ${pod.key} is already defined in ${first}; ignoring this file` });
        continue;
      }
      pods.set(pod.key, pod);
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      errors.push({ file: path, message: error.message });
    }
  }
  return { pods, errors };
}

/** Names of the regular manifest files directly in `root`, sorted; symlinks to files count. */
function listManifestFiles(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "does not exist" : code === "ENOTDIR" ? "is not a directory" : (error as Error).message;
    throw new ManifestSourceError(root, reason, { cause: error });
  }
  return names
    .filter((name) => !name.startsWith(".") && manifestFormat(name) !== undefined)
    .filter((name) => {
      try {
        return statSync(join(root, name)).isFile();
      } catch {
        // Removed since the listing, or a dangling symlink: not a pod in this pass.
        return false;
      }
    })
    .sort();
}
