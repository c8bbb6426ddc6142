/**
 * Kubernetes resource quantities (apimachinery's resource.Quantity): the grammar, the exact value,
 * and the string the API server serves back. Values are held as a BigInt count of nano-units, which
 * is exact because parsing rounds every non-zero value up to 1n (the API server's rule: asking for
 * a sliver of a resource gets the smallest amount, never zero).
 */

export type QuantityFormat = "DecimalSI" | "BinarySI" | "DecimalExponent";

/** The API server's own pattern, quoted in its error for a malformed quantity. */
export const QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

export const QUANTITY_ERRORS = {
  format: `quantities must match the regular expression '${QUANTITY_PATTERN}'`,
  numeric: "unable to parse numeric part of quantity",
  suffix: "unable to parse quantity's suffix",
} as const;

export class QuantityError extends Error {
  override readonly name = "QuantityError";
  readonly input: string;

  constructor(input: string, message: string) {
    super(message);
    this.input = input;
  }
}

const NANO = 10n ** 9n;
/** BinarySI values are capped at int64's maximum, as apimachinery caps them. */
const MAX_BINARY_NANOS = (2n ** 63n - 1n) * NANO;
/** Beyond this a decimal exponent would only make a number too large to hold; no real request is near it. */
const MAX_EXPONENT = 1000;
/** apimachinery's maxInt64Factors: the digits an int64 can hold, for its fast path that may keep the input string. */
const MAX_INT64_DIGITS = 18;

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([suffix, exponent]) => [exponent, suffix]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([suffix, exponent]) => [exponent, suffix]));

/** A parsed quantity: exact, comparable, printed as the API server prints it. */
export class Quantity {
  /** The value times 10^9, exact. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
  /** The input, when apimachinery keeps it because it is already in canonical form. */
  private readonly kept: string | undefined;

  constructor(nanos: bigint, format: QuantityFormat, kept?: string) {
    this.nanos = nanos;
    this.format = format;
    this.kept = kept;
  }

  static zero(format: QuantityFormat = "DecimalSI"): Quantity {
    return new Quantity(0n, format);
  }

  /** -1, 0 or 1. */
  sign(): number {
    return this.nanos < 0n ? -1 : this.nanos > 0n ? 1 : 0;
  }

  cmp(other: Quantity): number {
    return this.nanos < other.nanos ? -1 : this.nanos > other.nanos ? 1 : 0;
  }

  /** The sum; a zero left side takes the right side's format, as Quantity.Add does. */
  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  /** The value in thousandths, rounded up (Quantity.MilliValue). */
  milliValue(): bigint {
    return ceilDiv(this.nanos, 10n ** 6n);
  }

  /** The value in whole units, rounded up (Quantity.Value). */
  value(): bigint {
    return ceilDiv(this.nanos, NANO);
  }

  /** What `kubectl get -o yaml` shows after the API server stored it. */
  toString(): string {
    return this.kept ?? canonical(this.nanos, this.format);
  }

  toJSON(): string {
    return this.toString();
  }
}

/** Parses `500m`, `0.5`, `128Mi`, `1e3`; throws QuantityError with the API server's message. */
export function parseQuantity(input: string): Quantity {
  if (input === "") throw new QuantityError(input, QUANTITY_ERRORS.format);
  if (input === "0") return new Quantity(0n, "DecimalSI", input);
  const { negative, whole, fraction, suffix } = splitQuantity(input);
  const unit = interpretSuffix(suffix);
  if (!unit) throw new QuantityError(input, QUANTITY_ERRORS.suffix);

  const digits = BigInt(whole + fraction);
  let nanos: bigint;
  if (unit.base === 10) {
    nanos = scaleToNanos(digits, unit.exponent - fraction.length);
  } else {
    nanos = scaleToNanos(digits << BigInt(unit.exponent), -fraction.length);
    if (nanos > MAX_BINARY_NANOS) nanos = MAX_BINARY_NANOS;
  }
  let format = unit.format;
  if (format === "BinarySI" && nanos > 0n && nanos < NANO) format = "DecimalSI";
  const signed = negative ? -nanos : nanos;
  return new Quantity(signed, format, keepsInput(whole, fraction, unit) ? input : undefined);
}

/** A quantity from a manifest value: YAML may hand over a number (`cpu: 1`), which the API reads as its text. */
export function quantityFromValue(value: unknown): Quantity {
  if (typeof value === "number" && Number.isFinite(value)) return parseQuantity(String(value));
  // The API server's JSON decoding trims surrounding spaces before parsing.
  if (typeof value === "string") return parseQuantity(value.trim());
  throw new QuantityError(String(value), QUANTITY_ERRORS.format);
}

interface Unit {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

/** apimachinery's scanner: sign, digits, optional `.digits`, then suffix letters, optional sign and digits. */
function splitQuantity(input: string): { negative: boolean; whole: string; fraction: string; suffix: string } {
  const match = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/.exec(input);
  if (!match) throw new QuantityError(input, QUANTITY_ERRORS.format);
  const [, sign, whole, fraction = "", suffix = ""] = match;
  return { negative: sign === "-", whole: whole || "0", fraction, suffix };
}

function interpretSuffix(suffix: string): Unit | undefined {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]!, format: "DecimalSI" };
  if (suffix in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E") && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
    return { base: 10, exponent, format: "DecimalExponent" };
  }
  return undefined;
}

/** digits x 10^exponent in nano-units, a non-zero remainder rounded up to 1n. */
function scaleToNanos(digits: bigint, exponent: number): bigint {
  const shift = exponent + 9;
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  return ceilDiv(digits, 10n ** BigInt(-shift));
}

function ceilDiv(value: bigint, divisor: bigint): bigint {
  const quotient = value / divisor;
  return value % divisor > 0n ? quotient + 1n : quotient;
}

/**
 * apimachinery's fast path keeps the written string when it already reads as canonical
 * (`100m`, `128Mi`, `1e3`, `1E3`): the API server then serves it back unchanged.
 */
function keepsInput(whole: string, fraction: string, unit: Unit): boolean {
  const shifted = whole + fraction;
  if (unit.base === 2) {
    const precision = 15 - whole.length - Math.trunc((unit.exponent * 3) / 10) - 1;
    if (unit.exponent < 0 || fraction !== "" || precision < 0) return false;
    const value = BigInt(shifted);
    return value << BigInt(unit.exponent) < 2n ** 63n && (value & 7n) !== 0n;
  }
  const scale = unit.exponent - fraction.length;
  if (shifted.length > MAX_INT64_DIGITS || scale < -9) return false;
  return scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
}

/** CanonicalizeBytes: the shortest exact form in the quantity's format. */
function canonical(nanos: bigint, format: QuantityFormat): string {
  if (nanos === 0n) return "0";
  const negative = nanos < 0n;
  const magnitude = negative ? -nanos : nanos;
  const sign = negative ? "-" : "";
  if (format === "BinarySI" && magnitude >= 1024n * NANO && magnitude % NANO === 0n) {
    let mantissa = magnitude / NANO;
    let exponent = 0;
    while (mantissa % 1024n === 0n && BINARY_BY_EXPONENT.has(exponent + 10)) {
      mantissa /= 1024n;
      exponent += 10;
    }
    return `${sign}${mantissa}${BINARY_BY_EXPONENT.get(exponent) ?? ""}`;
  }
  let mantissa = magnitude;
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent -= 1;
  }
  const suffix = DECIMAL_BY_EXPONENT.get(exponent);
  // Past E (10^18) there is no SI suffix: apimachinery falls back to exponent notation.
  if (format === "DecimalExponent" || suffix === undefined) return `${sign}${mantissa}${exponent === 0 ? "" : `e${exponent}`}`;
  return `${sign}${mantissa}${suffix}`;
}
