/**
 * The v1 Pod shown for a manifest file that is not run because it does not parse or validate:
 * phase Pending with reason `Invalid`, so `get pods` prints STATUS Invalid (kubectl's printer shows
 * status.reason when set), no containers (READY 0/0), and the file in an annotation.
 */
import { formatIssue } from "../manifest/errors.ts";
import type { SourceError } from "../manifest/source.ts";
import { isoTime } from "./time.ts";
import type { V1Pod } from "./v1.ts";

/** The manifest file a refused row stands for (the kubelet has no annotation for a file's path). */
export const MANIFEST_FILE_ANNOTATION = "minikubelet.io/manifest-file";
export const INVALID_REASON = "Invalid";

export type RefusedFile = Pick<SourceError, "file" | "namespace" | "name" | "reason" | "issues"> & { uid: string };

export function refusedPodObject(refused: RefusedFile, firstSeenAt: number): V1Pod {
  const what = refused.reason === "FailedToParse" ? "could not be parsed" : "is invalid";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: refused.name,
      namespace: refused.namespace,
      uid: refused.uid,
      creationTimestamp: isoTime(firstSeenAt),
      annotations: { "kubernetes.io/config.source": "file", [MANIFEST_FILE_ANNOTATION]: refused.file },
    },
    spec: { containers: [] },
    status: {
      phase: "Pending",
      reason: INVALID_REASON,
      message: `manifest ${refused.file} ${what}: ${refused.issues.map(formatIssue).join("; ")}`,
    },
  };
}

/** The file of a row `get pods` prints as Invalid, or undefined for a pod that runs. */
export function refusedManifestFile(pod: V1Pod): string | undefined {
  return pod.status?.reason === INVALID_REASON ? pod.metadata.annotations?.[MANIFEST_FILE_ANNOTATION] : undefined;
}

/** One line per Invalid row of a table, naming its file: `get pods` prints them on stderr, after the table. */
export function refusedManifestNotes(pods: readonly V1Pod[]): string {
  return pods
    .flatMap((pod) => {
      const file = refusedManifestFile(pod);
      const namespace = pod.metadata.namespace ?? "default";
      return file === undefined ? [] : [`Invalid: ${pod.metadata.name} is the manifest ${file}, not run (minikubelet describe pod ${pod.metadata.name} -n ${namespace})\n`];
    })
    .join("");
}
