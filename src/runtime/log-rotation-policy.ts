/**
 * How large a container's log may grow, as the kubelet's container log manager caps it:
 * `--container-log-max-size` per file and `--container-log-max-files` files (the current one and
 * the rotated ones), so a container's output costs at most their product on disk. The process
 * runtime's monitor rotates by these numbers; docker gets them as json-file log options.
 */
import { parseQuantity } from "../manifest/quantity.ts";

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
  const maxBytes = options.maxSize === undefined ? DEFAULT_LOG_POLICY.maxBytes : bytesOf(String(options.maxSize));
  if (maxBytes === undefined || maxBytes < 1) {
    throw new LogPolicyError(`--container-log-max-size must be a positive size such as 10Mi, 512Ki or 1G (got ${JSON.stringify(options.maxSize)})`);
  }
  const maxFiles = options.maxFiles === undefined ? DEFAULT_LOG_POLICY.maxFiles : Number(options.maxFiles);
  if (!Number.isInteger(maxFiles) || maxFiles < MIN_LOG_FILES) {
    throw new LogPolicyError(`--container-log-max-files must be a whole number of at least ${MIN_LOG_FILES} (got ${JSON.stringify(options.maxFiles)})`);
  }
  return { maxBytes, maxFiles };
}

/** The flag's value read as the kubelet reads it (resource.ParseQuantity), in whole bytes rounded up. */
function bytesOf(text: string): number | undefined {
  try {
    const bytes = Number(parseQuantity(text.trim()).value());
    return Number.isSafeInteger(bytes) ? bytes : undefined;
  } catch {
    return undefined;
  }
}
