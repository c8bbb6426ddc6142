/**
 * The files of the volumes made of API objects, as the kubelet's volume plugins compute them
 * before the AtomicWriter writes them: configMap (pkg/volume/configmap MakePayload), secret
 * (pkg/volume/secret MakePayload) and projected (pkg/volume/projected collectData: configMap,
 * secret, downwardAPI and serviceAccountToken sources). Every key at its own name, or only the
 * listed items at their paths; the item's mode, else the volume's defaultMode. A missing object
 * is an empty volume when optional, else the volume cannot be set up (its message is the
 * kubelet's, for the FailedMount event); a listed key the object lacks likewise.
 */
import type { FilledVolume, KeyToPath, ObjectFilesSource, PodSpec } from "../../manifest/types.ts";
import { volumeFiles, type DownwardFacts } from "../env/downward-values.ts";
import type { PayloadFile } from "./atomic-writer.ts";
import { notFoundMessage, type PodObjectSource } from "../objects/pod-object-source.ts";
import type { TokenCache } from "./token-cache.ts";

/** A volume that cannot be set up now; `message` follows `MountVolume.SetUp failed for volume "x" : `. */
export class VolumeSetUpError extends Error {
  override readonly name = "VolumeSetUpError";
  /** When to try again (a failed TokenRequest's retry); absent: when the object arrives. */
  retryAt?: number;
  /** Set while the source is still reading an object: no FailedMount until then. */
  quietUntil?: number;
}

export interface PayloadInputs {
  facts: DownwardFacts;
  objects?: PodObjectSource;
  tokens?: TokenCache;
}

export interface Payload {
  files: PayloadFile[];
  /** When the volume must be computed again (a token's refresh): the pass arms a wake-up. */
  nextAt?: number;
}

export function volumePayload(pod: PodSpec, volume: FilledVolume, inputs: PayloadInputs): Payload {
  switch (volume.type) {
    case "downwardAPI":
      return { files: volumeFiles(pod, volume, inputs.facts) };
    case "configMap":
    case "secret":
      return { files: objectFiles(pod, volume.type, volume.source, volume.defaultMode, inputs.objects) };
    case "projected":
      return projectedFiles(pod, volume, inputs);
  }
}

function objectFiles(pod: PodSpec, kind: "configMap" | "secret", source: ObjectFilesSource, defaultMode: number, objects: PodObjectSource | undefined): PayloadFile[] {
  if (!objects) throw new VolumeSetUpError(`${kind === "configMap" ? "configmap" : "secret"} ${pod.namespace}/${source.name}: no source of API objects`);
  const lookup = kind === "configMap" ? objects.configMap(pod.namespace, source.name) : objects.secret(pod.namespace, source.name);
  if (lookup.state === "unavailable") {
    const error = new VolumeSetUpError(lookup.message);
    if (lookup.quietUntil !== undefined) error.quietUntil = lookup.quietUntil;
    throw error;
  }
  if (lookup.state === "notFound") {
    if (source.optional) return [];
    throw new VolumeSetUpError(notFoundMessage(kind, source.name));
  }
  const values = new Map<string, string | Uint8Array>();
  if ("binaryData" in lookup.object) {
    for (const [key, value] of Object.entries(lookup.object.data)) values.set(key, value);
    for (const [key, value] of Object.entries(lookup.object.binaryData)) values.set(key, value);
  } else {
    for (const [key, value] of Object.entries(lookup.object.data)) values.set(key, value);
  }
  const mappings: KeyToPath[] = source.items ?? [...values.keys()].sort().map((key) => ({ key, path: key }));
  const files: PayloadFile[] = [];
  for (const item of mappings) {
    const content = values.get(item.key);
    if (content === undefined) {
      if (source.optional) continue;
      throw new VolumeSetUpError(kind === "configMap" ? `configmap references non-existent config key: ${item.key}` : `references non-existent secret key: ${item.key}`);
    }
    files.push({ path: item.path, content, mode: item.mode ?? defaultMode });
  }
  return files;
}

function projectedFiles(pod: PodSpec, volume: Extract<FilledVolume, { type: "projected" }>, inputs: PayloadInputs): Payload {
  const files = new Map<string, PayloadFile>();
  const errors: string[] = [];
  let nextAt: number | undefined;
  let quietUntil: number | undefined;
  for (const projection of volume.sources) {
    try {
      if (projection.kind === "configMap" || projection.kind === "secret") {
        for (const file of objectFiles(pod, projection.kind, projection.source, volume.defaultMode, inputs.objects)) files.set(file.path, file);
      } else if (projection.kind === "downwardAPI") {
        const downward = volumeFiles(pod, { name: volume.name, type: "downwardAPI", defaultMode: volume.defaultMode, items: projection.items }, inputs.facts);
        for (const file of downward) files.set(file.path, file);
      } else {
        if (!inputs.tokens) throw new VolumeSetUpError("no source of service account tokens");
        const spec = (pod.manifest.spec ?? {}) as Record<string, unknown>;
        const serviceAccount = typeof spec.serviceAccountName === "string" && spec.serviceAccountName !== "" ? spec.serviceAccountName : "default";
        const answer = inputs.tokens.token({
          namespace: pod.namespace,
          serviceAccount,
          podName: pod.name,
          podUid: pod.uid,
          audiences: projection.audience ? [projection.audience] : [],
          expirationSeconds: projection.expirationSeconds,
        });
        if (answer.nextAt !== undefined) nextAt = Math.min(nextAt ?? Infinity, answer.nextAt);
        if (answer.lookup.state !== "found") throw new VolumeSetUpError(answer.lookup.state === "unavailable" ? answer.lookup.message : "token not found");
        files.set(projection.path, { path: projection.path, content: answer.lookup.object, mode: volume.defaultMode });
      }
    } catch (error) {
      if (!(error instanceof VolumeSetUpError)) throw error;
      errors.push(error.message);
      if (error.quietUntil !== undefined) quietUntil = Math.max(quietUntil ?? 0, error.quietUntil);
    }
  }
  if (errors.length > 0) {
    // utilerrors.NewAggregate: one error as it is, several in brackets.
    const error = new VolumeSetUpError(errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`);
    if (nextAt !== undefined) error.retryAt = nextAt;
    if (quietUntil !== undefined) error.quietUntil = quietUntil;
    throw error;
  }
  return { files: [...files.values()], ...(nextAt !== undefined && { nextAt }) };
}
