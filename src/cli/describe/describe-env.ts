/**
 * One env line of `kubectl describe pod`, as kubectl writes it (describeContainerEnvVars): a plain
 * value as is; a fieldRef as `VALUE (v1:metadata.name)`, the value read from the served pod's
 * metadata (EnvValueRetriever, empty for what the object cannot answer); a resourceFieldRef as
 * `VALUE (limits.cpu)` from the container's own resources, `node allocatable` for an unset limit.
 */
import type { ContainerSpec, EnvVar } from "../../manifest/types.ts";
import { splitSubscript } from "../../manifest/validation/validate-downward.ts";
import { containerResourceValue } from "../../kubelet/env/downward-values.ts";
import type { V1Pod } from "../../v1/v1.ts";

export function describeEnvValue(env: EnvVar, container: ContainerSpec, pod: V1Pod): string {
  const from = env.valueFrom;
  if (!from) return env.value;
  if ("fieldRef" in from) return `${fieldValue(from.fieldRef.fieldPath, pod)} (${from.fieldRef.apiVersion}:${from.fieldRef.fieldPath})`;
  // kubectl's wording (describe.go describeContainerEnvVars): the value itself is never shown.
  if ("configMapKeyRef" in from) return `<set to the key '${from.configMapKeyRef.key}' of config map '${from.configMapKeyRef.name}'>\tOptional: ${from.configMapKeyRef.optional}`;
  if ("secretKeyRef" in from) return `<set to the key '${from.secretKeyRef.key}' in secret '${from.secretKeyRef.name}'>\tOptional: ${from.secretKeyRef.optional}`;
  const { resource } = from.resourceFieldRef;
  let value = containerResourceValue(container, from.resourceFieldRef, undefined);
  if (value === "0" && (resource === "limits.cpu" || resource === "limits.memory")) value = "node allocatable";
  return `${value} (${resource})`;
}

function fieldValue(fieldPath: string, pod: V1Pod): string {
  const { path, subscript } = splitSubscript(fieldPath);
  if (subscript !== undefined) return (path === "metadata.labels" ? pod.metadata.labels : pod.metadata.annotations)?.[subscript] ?? "";
  switch (fieldPath) {
    case "metadata.name":
      return pod.metadata.name;
    case "metadata.namespace":
      return pod.metadata.namespace ?? "";
    case "metadata.uid":
      return pod.metadata.uid ?? "";
    default:
      return "";
  }
}
