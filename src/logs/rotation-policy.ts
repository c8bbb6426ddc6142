/**
 * How large a container's log may grow, as the kubelet's container log manager caps it:
 * `--container-log-max-size` per file and `--container-log-max-files` files (the current one and
 * the rotated ones), so a container's output costs at most their product on disk. The process
 * runtime's monitor rotates by these numbers; docker gets them as json-file log options.
 */

export interface ContainerLogPolicy {
  maxBytes: number;
  maxFiles: number;
}

/** The kubelet's defaults (containerLogMaxSize 10Mi, containerLogMaxFiles 5). */
export const DEFAULT_LOG_POLICY: ContainerLogPolicy = { maxBytes: 10 * 1024 * 1024, maxFiles: 5 };

/** The kubelet refuses fewer: one current file and at least one rotated one. */
export const MIN_LOG_FILES = 2;

export class LogPolicyError extends Error {
  override readonly name = "LogPolicyError";
}

/**
 * The two flags' values checked as the kubelet validates them. Values may come from cac as numbers.
 */
export function containerLogPolicy(options: { maxSize?: unknown; maxFiles?: unknown }): ContainerLogPolicy {
  const maxBytes = options.maxSize === undefined ? DEFAULT_LOG_POLICY.maxBytes : byteQuantity(String(options.maxSize));
  if (maxBytes === undefined || maxBytes < 1) {
    throw new LogPolicyError(`--container-log-max-size must be a positive size such as 10Mi, 512Ki or 1G (got ${JSON.stringify(options.maxSize)})`);
  }
  const maxFiles = options.maxFiles === undefined ? DEFAULT_LOG_POLICY.maxFiles : Number(options.maxFiles);
  if (!Number.isInteger(maxFiles) || maxFiles < MIN_LOG_FILES) {
    throw new LogPolicyError(`--container-log-max-files must be a whole number of at least ${MIN_LOG_FILES} (got ${JSON.stringify(options.maxFiles)})`);
  }
  return { maxBytes, maxFiles };
}

const SUFFIXES: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/**
 * A byte count written as a Kubernetes quantity, in the subset a log size needs (a whole or decimal
 * number and a binary or decimal suffix), rounded up to a whole byte as the API server rounds.
 * Kept here alone so the full quantity parser can take its place.
 */
export function byteQuantity(text: string): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(|k|M|G|T|Ki|Mi|Gi|Ti)$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.ceil(Number(match[1]) * (SUFFIXES[match[2] ?? ""] ?? Number.NaN));
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
