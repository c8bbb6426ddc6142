/**
 * `spec.os` and a container's `lifecycle.stopSignal` (KEP-4960), in the API server's words: a stop
 * signal needs the pod's OS named, and must be one that OS can deliver (validateOS, validateStopSignal).
 */
import type { Fields } from "../fields.ts";
import { LINUX_STOP_SIGNALS, WINDOWS_STOP_SIGNALS, type SignalName } from "../signals.ts";

/** `spec.os.name` as written; null when the pod names no OS (spec.os absent). */
export type PodOS = string | null;

const POD_OS_NAMES = ["linux", "windows"] as const;

/** Reads `spec.os`: its name is required once `os` is set, and must be linux or windows. */
export function readPodOS(spec: Fields): PodOS {
  const os = spec.object("os");
  if (!os) return null;
  const name = os.string("name");
  if (name === undefined || name === "") {
    if (name !== undefined || !os.has("name")) os.fail("name", "required");
    return "";
  }
  if (!(POD_OS_NAMES as readonly string[]).includes(name)) os.fail("name", unsupported(name, POD_OS_NAMES));
  return name;
}

/** The container's stop signal when it names one the pod's OS allows; the refusal recorded otherwise. */
export function readStopSignal(lifecycle: Fields, os: PodOS): SignalName | undefined {
  if (!lifecycle.has("stopSignal")) return undefined;
  const signal = lifecycle.string("stopSignal");
  if (signal === undefined) return undefined;
  if (os === null) {
    lifecycle.fail("stopSignal", "Forbidden: may not be set for containers with empty `spec.os.name`");
    return undefined;
  }
  // The API server checks the signal against the list of the OS named; another OS is refused as such.
  const allowed = os === "windows" ? WINDOWS_STOP_SIGNALS : os === "linux" ? [...LINUX_STOP_SIGNALS.keys()] : undefined;
  if (!allowed) return undefined;
  if (!allowed.includes(signal)) {
    lifecycle.fail("stopSignal", unsupported(signal, allowed));
    return undefined;
  }
  return signal;
}

/** field.NotSupported: the supported values sorted, as sets.List gives them. */
function unsupported(value: string, allowed: readonly string[]): string {
  const sorted = [...allowed].sort();
  return `Unsupported value: ${JSON.stringify(value)}: supported values: ${sorted.map((v) => JSON.stringify(v)).join(", ")}`;
}
