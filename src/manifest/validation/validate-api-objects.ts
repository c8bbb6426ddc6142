/**
 * What only a pod of the cluster may hold: references to ConfigMaps, Secrets and ServiceAccount
 * tokens (env's configMapKeyRef and secretKeyRef, envFrom, configMap, secret and projected
 * volumes). The API server validated such a pod already; these readers check what the kubelet
 * relies on (names, keys, paths inside the volume, modes) and read the rest as it is. A static pod
 * (a file, a pod of the agent's own API) may hold none of them, as the kubelet refuses one
 * (pkg/kubelet/config/common.go): the field-level refusals of validate.ts and validate-downward.ts.
 */
import type { EnvFromSource, KeyToPath, ObjectFilesSource, Volume, VolumeProjection } from "../types.ts";
import { Fields } from "../fields.ts";
import { localPathProblems, readDownwardAPIVolume, readMode } from "./validate-downward.ts";

/** `envFrom`: each entry exactly one of configMapRef and secretRef. */
export function readEnvFrom(fields: Fields): EnvFromSource[] {
  const sources: EnvFromSource[] = [];
  for (const item of fields.objectList("envFrom")) {
    const prefix = item.string("prefix") ?? "";
    const configMap = item.object("configMapRef");
    const secret = item.object("secretRef");
    if (configMap && secret) {
      item.fail(undefined, "may not have more than one field specified at a time");
      continue;
    }
    const ref = configMap ?? secret;
    if (!ref) {
      item.fail(undefined, "must specify one of: `configMapRef` or `secretRef`");
      continue;
    }
    const name = ref.requiredString("name");
    if (name !== "") sources.push({ prefix, kind: configMap ? "configMap" : "secret", name, optional: ref.bool("optional", false) });
  }
  return sources;
}

/** `volumes[i].configMap` / `.secret` (the secret's object named by `secretName`). */
export function readObjectVolume(name: string, type: "configMap" | "secret", fields: Fields): Volume {
  const defaultMode = readMode(fields, "defaultMode") ?? 0o644;
  if (type === "secret") return { name, type, defaultMode, source: readFilesSource(fields, "secretName") };
  return { name, type, defaultMode, source: readFilesSource(fields, "name") };
}

/** `volumes[i].projected`: configMap, secret, downwardAPI and serviceAccountToken sources (a static pod's: downwardAPI alone, checked before). */
export function readProjectedVolume(name: string, fields: Fields): Volume {
  const defaultMode = readMode(fields, "defaultMode") ?? 0o644;
  const sources: VolumeProjection[] = [];
  for (const item of fields.objectList("sources")) {
    const configMap = item.object("configMap");
    const secret = item.object("secret");
    const downward = item.object("downwardAPI");
    const token = item.object("serviceAccountToken");
    if (configMap) sources.push({ kind: "configMap", source: readFilesSource(configMap, "name") });
    else if (secret) sources.push({ kind: "secret", source: readFilesSource(secret, "name") });
    else if (downward) {
      const volume = readDownwardAPIVolume(name, downward);
      if (volume.type === "downwardAPI") sources.push({ kind: "downwardAPI", items: volume.items });
    } else if (token) {
      const path = token.requiredString("path");
      for (const problem of localPathProblems(path)) token.fail("path", `${JSON.stringify(path)}: ${problem}`);
      // The API server defaults it to an hour and refuses less than 10 minutes.
      const expirationSeconds = token.int("expirationSeconds", { min: 600, default: 3600 });
      const audience = token.string("audience");
      sources.push({ kind: "serviceAccountToken", path, expirationSeconds, ...(audience && { audience }) });
    } else {
      const kinds = Object.keys(item.obj).join(", ") || "none";
      item.fail(undefined, `projected volume sources supported: configMap, secret, downwardAPI and serviceAccountToken (found ${kinds})`);
    }
  }
  return { name, type: "projected", defaultMode, sources };
}

function readFilesSource(fields: Fields, nameKey: string): ObjectFilesSource {
  const source: ObjectFilesSource = { name: fields.requiredString(nameKey), optional: fields.bool("optional", false) };
  if (!fields.has("items")) return source;
  const items: KeyToPath[] = [];
  for (const item of fields.objectList("items")) {
    const key = item.requiredString("key");
    const path = item.requiredString("path");
    for (const problem of localPathProblems(path)) item.fail("path", `${JSON.stringify(path)}: ${problem}`);
    const mode = readMode(item, "mode");
    items.push({ key, path, ...(mode !== undefined && { mode }) });
  }
  source.items = items;
  return source;
}
