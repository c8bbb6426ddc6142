/**
 * One env line of `kubectl describe pod`, as kubectl writes it (describeContainerEnvVars): a plain
 * value as is; a fieldRef as `VALUE (v1:metadata.name)`, the value read from the served pod's
 * metadata (EnvValueRetriever, empty for what the object cannot answer); a resourceFieldRef as
 * `VALUE (limits.cpu)` from the container's own resources, `node allocatable` for an unset limit.
 */
import type { ContainerSpec, EnvVar } from "../manifest/types.ts";
import { parseQuantity } from "../manifest/quantity.ts";
import type { V1Pod } from "../status/v1.ts";

export function describeEnvValue(env: EnvVar, container: ContainerSpec, pod: V1Pod): string {
  const from = env.valueFrom;
  if (!from) return env.value;
  if ("fieldRef" in from) return `${fieldValue(from.fieldRef.fieldPath, pod)} (${from.fieldRef.apiVersion}:${from.fieldRef.fieldPath})`;
  const { resource } = from.resourceFieldRef;
  let value = containerResource(container, resource, from.resourceFieldRef.divisor);
  if (value === "0" && (resource === "limits.cpu" || resource === "limits.memory")) value = "node allocatable";
  return `${value} (${resource})`;
}

function fieldValue(fieldPath: string, pod: V1Pod): string {
  const subscript = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (subscript) return (subscript[1] === "labels" ? pod.metadata.labels : pod.metadata.annotations)?.[subscript[2]!] ?? "";
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

/** ExtractContainerResourceValue without the node's allocatable: an unset resource is 0. */
function containerResource(container: ContainerSpec, resource: string, divisor = "1"): string {
  const [kind, name] = [resource.slice(0, resource.indexOf(".")), resource.slice(resource.indexOf(".") + 1)];
  const written = (kind === "limits" ? container.resources?.limits : container.resources?.requests)?.[name];
  if (written === undefined) return "0";
  const cpu = name === "cpu";
  const amount = cpu ? parseQuantity(written).milliValue() : parseQuantity(written).value();
  const per = cpu ? parseQuantity(divisor).milliValue() : parseQuantity(divisor).value();
  return String((amount + per - 1n) / per);
}
