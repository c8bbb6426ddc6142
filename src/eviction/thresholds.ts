/**
 * Hard eviction thresholds (`run --eviction-hard`), in the kubelet's syntax and with its defaults,
 * in one place: allocatable subtracts them (node-allocatable.ts) and the disk pressure monitor
 * compares the filesystems against them (disk-pressure.ts).
 */
import { parseQuantity, QuantityError } from "../manifest/quantity.ts";

/** An amount below which the signal is under pressure: bytes, or a fraction (0..1] of capacity. */
export type ThresholdValue = { bytes: bigint } | { fraction: number };

/** The signals this agent acts on; an absent one has no threshold. */
export interface EvictionThresholds {
  "memory.available"?: ThresholdValue;
  "nodefs.available"?: ThresholdValue;
}

export type EvictionSignal = keyof EvictionThresholds;

const SIGNALS: readonly EvictionSignal[] = ["memory.available", "nodefs.available"];

/** The kubelet's DefaultEvictionHard for these signals (its imagefs and inode signals are not watched here). */
export const DEFAULT_EVICTION_HARD = "memory.available<100Mi,nodefs.available<10%";

export class ThresholdError extends Error {
  override readonly name = "ThresholdError";
}

/**
 * `memory.available<100Mi,nodefs.available<10%`: a signal left out keeps its default (the kubelet
 * 1.34's mergeDefaultEvictionSettings; older kubelets set it to zero), and `0%` or `100%` turns
 * a signal off, as the kubelet ignores those two. Values follow the kubelet's
 * parseThresholdStatement: a percentage up to 100%, or a positive quantity.
 */
export function parseEvictionHard(text: string): EvictionThresholds {
  const thresholds = { ...DEFAULTS };
  for (const statement of text.split(",").map((part) => part.trim())) {
    if (statement === "") continue;
    const [signal, value, extra] = statement.split("<");
    if (value === undefined || extra !== undefined) throw new ThresholdError(`${JSON.stringify(statement)} is not SIGNAL<VALUE (e.g. nodefs.available<10%)`);
    if (!SIGNALS.includes(signal as EvictionSignal)) {
      throw new ThresholdError(`unsupported eviction signal ${signal} (this agent watches ${SIGNALS.join(" and ")})`);
    }
    const parsed = thresholdValue(signal!, value.trim());
    if (parsed === undefined) delete thresholds[signal as EvictionSignal];
    else thresholds[signal as EvictionSignal] = parsed;
  }
  return thresholds;
}

const DEFAULTS: EvictionThresholds = {
  "memory.available": { bytes: 100n * 1024n * 1024n },
  "nodefs.available": { fraction: 0.1 },
};

function thresholdValue(signal: string, value: string): ThresholdValue | undefined {
  if (value.endsWith("%")) {
    if (value === "0%" || value === "100%") return undefined;
    const percent = Number(value.slice(0, -1));
    if (value.length === 1 || !Number.isFinite(percent)) throw new ThresholdError(`eviction threshold ${signal}: ${JSON.stringify(value)} is not a percentage`);
    if (percent < 0) throw new ThresholdError(`eviction percentage threshold ${signal} must be >= 0%: ${value}`);
    if (percent > 100) throw new ThresholdError(`eviction percentage threshold ${signal} must be <= 100%: ${value}`);
    return { fraction: percent / 100 };
  }
  let bytes: bigint;
  try {
    bytes = parseQuantity(value).value();
  } catch (error) {
    if (error instanceof QuantityError) throw new ThresholdError(`eviction threshold ${signal}: ${JSON.stringify(value)}: ${error.message}`);
    throw error;
  }
  if (bytes <= 0n) throw new ThresholdError(`eviction threshold ${signal} must be positive: ${value}`);
  return { bytes };
}

/** The threshold in bytes for a signal of this capacity (the kubelet's GetThresholdQuantity); 0 for none. */
export function thresholdBytes(value: ThresholdValue | undefined, capacityBytes: bigint): bigint {
  if (!value) return 0n;
  if ("bytes" in value) return value.bytes;
  return BigInt(Math.floor(Number(capacityBytes) * value.fraction));
}

/**
 * Back in the flag's syntax, for the banner and the database: `memory.available<100Mi,...`, every
 * signal named (`<0%` when off), so parsing it again gives the same thresholds.
 */
export function formatEvictionHard(thresholds: EvictionThresholds): string {
  return SIGNALS.map((signal) => `${signal}<${thresholds[signal] ? formatValue(thresholds[signal]) : "0%"}`).join(",");
}

function formatValue(value: ThresholdValue): string {
  if ("fraction" in value) return `${Number((value.fraction * 100).toPrecision(12))}%`;
  for (const [suffix, size] of [["Gi", 1n << 30n], ["Mi", 1n << 20n], ["Ki", 1n << 10n]] as const) {
    if (value.bytes % size === 0n) return `${value.bytes / size}${suffix}`;
  }
  return String(value.bytes);
}
