/** Shared parsing of flags, so every command names the flag and the value it refused. */
import { backoffSettings, DEFAULT_BACKOFF_SECONDS, type BackoffSettings } from "../kubelet/backoff.ts";
import { containerLogPolicy, LogPolicyError, type ContainerLogPolicy } from "../runtime/log-rotation-policy.ts";
import { checkNodeName } from "../manifest/validation/validate.ts";
import { parseGoDuration } from "../printers/go-duration.ts";
import { DEFAULT_RETENTION, type RetentionSettings } from "../store/retention.ts";
import { MAX_PODS } from "../eviction/node-allocatable.ts";
import { UsageError } from "./errors.ts";
import { parseReserved, ReservedError, type NodeReservations } from "../eviction/node-allocatable.ts";
import { DEFAULT_EVICTION_HARD, parseEvictionHard, ThresholdError } from "../eviction/thresholds.ts";

export function secondsOption(flag: string, value: unknown): number {
  const seconds = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`${flag} must be a number of seconds above 0 (got ${JSON.stringify(value)})`);
  }
  return seconds;
}

/**
 * `--backoff-base` and `--backoff-max`: both given with the base above the cap is refused rather
 * than silently cut to the cap, since both are the user's own choice. `--backoff-max` alone below
 * the default base lowers the first wait too, as the kubelet's node-wide cap does since 1.35.
 */
export function backoffOptions(options: { backoffBase?: unknown; backoffMax?: unknown }): BackoffSettings {
  const baseSeconds = options.backoffBase === undefined ? undefined : secondsOption("--backoff-base", options.backoffBase);
  const capSeconds = secondsOption("--backoff-max", options.backoffMax ?? DEFAULT_BACKOFF_SECONDS.cap);
  if (baseSeconds !== undefined && baseSeconds > capSeconds) {
    throw new UsageError(`--backoff-base (${baseSeconds}s) must not be above --backoff-max (${capSeconds}s)`);
  }
  return backoffSettings({ baseSeconds, capSeconds });
}

/** `--node`: it becomes part of every pod name (NAME-NODE), so it must be a DNS-1123 subdomain or empty. */
export function nodeOption(value: unknown): string {
  // cac turns a numeric-looking value into a number.
  const node = String(value ?? "");
  const problem = checkNodeName(node);
  if (problem) throw new UsageError(`--node: ${problem}`);
  return node;
}

/** `--container-log-max-size` and `--container-log-max-files`, as the kubelet checks them. */
export function logPolicyOption(options: { containerLogMaxSize?: unknown; containerLogMaxFiles?: unknown }): ContainerLogPolicy {
  try {
    return containerLogPolicy({ maxSize: options.containerLogMaxSize, maxFiles: options.containerLogMaxFiles });
  } catch (error) {
    if (error instanceof LogPolicyError) throw new UsageError(error.message);
    throw error;
  }
}

/** `--pod-max-pids`: a positive count, or -1 (the kubelet's default) for no limit, which is undefined here. */
export function podMaxPidsOption(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const pids = typeof value === "number" ? value : Number(value);
  if (pids === -1) return undefined;
  if (!Number.isSafeInteger(pids) || pids < 1) {
    throw new UsageError(`--pod-max-pids must be a whole number above 0, or -1 for no limit (got ${JSON.stringify(value)})`);
  }
  return pids;
}

/** `--housekeeping-interval` (a Go duration, the kubelet's cadvisor flag): between two readings of the usage figures. */
export function housekeepingIntervalOption(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseGoDuration(String(value));
  if (ms === undefined || ms < 100) throw new UsageError(`--housekeeping-interval must be a duration of at least 100ms, such as 10s (got ${JSON.stringify(value)})`);
  return ms;
}

/**
 * `--event-ttl` (a Go duration, as the API server's flag: `24h`, `90m`) and `--max-events-per-pod`.
 * The TTL also bounds how long a deleted pod stays for `describe`.
 */
export function retentionOptions(options: { eventTtl?: unknown; maxEventsPerPod?: unknown }): Pick<RetentionSettings, "eventTtlMs" | "maxEventsPerPod"> {
  const ttl = options.eventTtl === undefined ? DEFAULT_RETENTION.eventTtlMs : parseGoDuration(String(options.eventTtl));
  if (ttl === undefined || ttl <= 0) {
    throw new UsageError(`--event-ttl must be a duration above 0, such as 24h or 90m (got ${JSON.stringify(options.eventTtl)})`);
  }
  const max = options.maxEventsPerPod === undefined ? DEFAULT_RETENTION.maxEventsPerPod : Number(options.maxEventsPerPod);
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new UsageError(`--max-events-per-pod must be a whole number above 0 (got ${JSON.stringify(options.maxEventsPerPod)})`);
  }
  return { eventTtlMs: ttl, maxEventsPerPod: max };
}

/** `--eviction-hard`, `--system-reserved` and `--kube-reserved`: how allocatable is carved out of capacity. */
export function nodeReservationsOption(options: { evictionHard?: unknown; systemReserved?: unknown; kubeReserved?: unknown }): NodeReservations {
  try {
    return {
      evictionHard: parseEvictionHard(String(options.evictionHard ?? DEFAULT_EVICTION_HARD)),
      systemReserved: parseReserved("--system-reserved", String(options.systemReserved ?? "")),
      kubeReserved: parseReserved("--kube-reserved", String(options.kubeReserved ?? "")),
    };
  } catch (error) {
    if (error instanceof ThresholdError) throw new UsageError(`--eviction-hard: ${error.message}`);
    if (error instanceof ReservedError) throw new UsageError(error.message);
    throw error;
  }
}

/** `--max-pods`: how many pods admission lets run at once, a whole number above 0 (the kubelet's flag). */
export function maxPodsOption(value: unknown): number {
  if (value === undefined) return MAX_PODS;
  const pods = typeof value === "number" ? value : Number(value);
  if (!Number.isSafeInteger(pods) || pods < 1) throw new UsageError(`--max-pods must be a whole number above 0 (got ${JSON.stringify(value)})`);
  return pods;
}
