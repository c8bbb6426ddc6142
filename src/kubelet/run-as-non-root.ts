/**
 * runAsNonRoot, checked before a container is created as the kubelet's verifyRunAsNonRoot checks
 * it (kuberuntime/security_context_others.go): the container's effective securityContext (its
 * own over the pod's) against the user it would run as, the securityContext's runAsUser or else
 * the image's (Runtime.imageUser: the image's USER on docker, the agent's own user on the process
 * runtime). A refusal is the kubelet's CreateContainerConfigError, in its words.
 */
import { securityContexts } from "../manifest/security-context.ts";
import type { PodSpec } from "../manifest/types.ts";
import type { ImageUser } from "../runtime/runtime.ts";

interface RunAsFields {
  runAsNonRoot?: boolean;
  runAsUser?: number;
}

/** The effective runAsNonRoot and runAsUser of container `name` (DetermineEffectiveSecurityContext). */
function effective(pod: PodSpec, name: string): RunAsFields {
  const { pod: podContext, container: own } = securityContexts<RunAsFields>(pod, name);
  const runAsNonRoot = own.runAsNonRoot ?? podContext.runAsNonRoot;
  const runAsUser = own.runAsUser ?? podContext.runAsUser;
  return { ...(runAsNonRoot !== undefined && { runAsNonRoot }), ...(runAsUser !== undefined && { runAsUser }) };
}

/** Whether the container must be checked: only then is the image's user asked for. */
export function requiresNonRoot(pod: PodSpec, name: string): boolean {
  return effective(pod, name).runAsNonRoot === true;
}

/** Why container `name` may not start, or undefined; `described` is the pod as the kubelet names it (`NAME_NS(UID)`). */
export function runAsNonRootRefusal(pod: PodSpec, name: string, image: ImageUser, described: string): string | undefined {
  const { runAsNonRoot, runAsUser } = effective(pod, name);
  if (runAsNonRoot !== true) return undefined;
  const where = `(pod: ${JSON.stringify(described)}, container: ${name})`;
  if (runAsUser !== undefined) return runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
  if (image.uid === undefined && image.username) return `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root ${where}`;
  const uid = image.uid ?? 0;
  if (uid === 0) return `container has runAsNonRoot and image will run as root ${where}`;
  if (uid < 0 || uid > 2147483647) return `container has runAsNonRoot and image has an invalid user id (${uid}). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${where}`;
  return undefined;
}
