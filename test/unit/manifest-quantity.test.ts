import { describe, expect, test } from "bun:test";
import { parseQuantity, QUANTITY_ERRORS, QuantityError, quantityFromValue, type QuantityFormat } from "../../src/manifest/quantity.ts";

// Cases from apimachinery's quantity_test.go (TestQuantityParse, TestQuantityString,
// TestQuantityParseEmit), as value in nano-units and format.
const N = 10n ** 9n;
const KI = 1024n;
const parsed: [input: string, nanos: bigint, format: QuantityFormat][] = [
  ["0", 0n, "DecimalSI"],
  ["0m", 0n, "DecimalSI"],
  ["0Ki", 0n, "BinarySI"],
  ["1", N, "DecimalSI"],
  ["1Ki", KI * N, "BinarySI"],
  ["7Mi", 7n * KI ** 2n * N, "BinarySI"],
  ["3Ei", 3n * KI ** 6n * N, "BinarySI"],
  ["5n", 5n, "DecimalSI"],
  ["4u", 4000n, "DecimalSI"],
  ["3m", 3_000_000n, "DecimalSI"],
  ["50k", 50_000n * N, "DecimalSI"],
  ["1E", 10n ** 18n * N, "DecimalSI"],
  ["1E-3", 1_000_000n, "DecimalExponent"],
  ["1e3", 1000n * N, "DecimalExponent"],
  ["1E18", 10n ** 18n * N, "DecimalExponent"],
  ["100.035k", 100_035n * N, "DecimalSI"],
  ["0.0005k", N / 2n, "DecimalSI"],
  ["0.5", N / 2n, "DecimalSI"],
  ["0.50000", N / 2n, "DecimalSI"],
  ["0.5e-1", N / 20n, "DecimalExponent"],
  ["1.3E+6", 1_300_000n * N, "DecimalExponent"],
  ["1.01E", 101n * 10n ** 16n * N, "DecimalSI"],
  // Saturation and rounding: up to the next nano-unit; binary capped at int64.
  ["3.001n", 4n, "DecimalSI"],
  ["1.1E-9", 2n, "DecimalExponent"],
  ["0.0000000001", 1n, "DecimalSI"],
  ["0.00000012345", 124n, "DecimalSI"],
  ["9Ei", (2n ** 63n - 1n) * N, "BinarySI"],
  ["9223372036854775807Ki", (2n ** 63n - 1n) * N, "BinarySI"],
  ["100.035Ki", 10_243_584n * 10n ** 7n, "BinarySI"],
  ["0.5Mi", 524_288n * N, "BinarySI"],
  ["0.000000000001Ki", 2n, "DecimalSI"],
  [".001", 1_000_000n, "DecimalSI"],
  ["1.", N, "DecimalSI"],
  ["1.G", 10n ** 9n * N, "DecimalSI"],
  [".", 0n, "DecimalSI"],
];

// What the API server serves back: input -> String().
const served: [input: string, shown: string][] = [
  ["1024Mi", "1Gi"],
  ["307200Ki", "300Mi"],
  ["1025024Mi", "1001Gi"],
  ["5000m", "5"],
  ["0.5", "500m"],
  [".5", "500m"],
  ["1000M", "1G"],
  ["0.001T", "1G"],
  ["1000u", "1m"],
  ["1.08", "1080m"],
  ["1080000000n", "1080m"],
  ["1000E", "1e21"],
  ["5000E", "5e21"],
  [".001e12", "1e9"],
  ["0.001e0", "1e-3"],
  ["1000e-12", "1e-9"],
  ["00", "0"],
  [".001Ki", "1024m"],
  [".000000001Ki", "1024n"],
  ["1.5Gi", "1536Mi"],
  ["0.5Gi", "512Mi"],
  ["1000m", "1"],
  ["1.0", "1"],
  ["-0.5", "-500m"],
  // Already canonical: kept exactly as written, as apimachinery's fast path keeps it.
  ["1500m", "1500m"],
  ["128Mi", "128Mi"],
  ["1E3", "1E3"],
  ["12e6", "12e6"],
  ["1001n", "1001n"],
  ["1Ki", "1Ki"],
  ["1025", "1025"],
  ["2000Ki", "2000Ki"],
  ["300e6", "300e6"],
  ["-1", "-1"],
];

describe("parseQuantity", () => {
  test.each(parsed)("%p has the value and format apimachinery gives it", (input, nanos, format) => {
    const quantity = parseQuantity(input);
    expect(quantity.nanos).toBe(nanos);
    expect(quantity.format).toBe(format);
    // A sign in front negates the value and keeps the format.
    expect(parseQuantity(`-${input}`).nanos).toBe(-nanos);
    expect(parseQuantity(`+${input}`).nanos).toBe(nanos);
  });

  test.each(served)("%p is served as %p", (input, shown) => {
    expect(parseQuantity(input).toString()).toBe(shown);
    expect(JSON.stringify({ cpu: parseQuantity(input) })).toBe(JSON.stringify({ cpu: shown }));
  });

  test.each(["1.1.M", "1+1.0M", "aoeu", " 1", "1 ", "", "1,5", "1Kb"])("%p breaks the grammar", (input) => {
    expect(() => parseQuantity(input)).toThrow(QUANTITY_ERRORS.format);
  });

  test.each(["0.1mi", "0.1am", ".5i", "1i", "-3.01i", "1e4294967297", "-3.01e-", "1kk"])("%p has an unknown suffix", (input) => {
    expect(() => parseQuantity(input)).toThrow(QuantityError);
  });

  test("the error quotes the API server's pattern", () => {
    expect(() => parseQuantity("one")).toThrow("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect(() => parseQuantity("1kk")).toThrow("unable to parse quantity's suffix");
  });
});

describe("arithmetic and comparison", () => {
  test("compares exactly across formats (TestQuantityCmp)", () => {
    expect(parseQuantity("100m").cmp(parseQuantity("50m"))).toBe(1);
    expect(parseQuantity("50m").cmp(parseQuantity("100m"))).toBe(-1);
    expect(parseQuantity("10000T").cmp(parseQuantity("100Gi"))).toBe(1);
    expect(parseQuantity("0.5").cmp(parseQuantity("500m"))).toBe(0);
    expect(parseQuantity("1Gi").cmp(parseQuantity("1G"))).toBe(1);
  });

  test("adding to zero keeps the other side's suffix (TestQuantityAddZeroPreservesSuffix)", () => {
    for (const value of ["100m", "1Gi"]) {
      expect(parseQuantity("0").add(parseQuantity(value)).toString()).toBe(value);
      expect(parseQuantity(value).add(parseQuantity("0")).toString()).toBe(value);
    }
    expect(parseQuantity("1Gi").add(parseQuantity("512Mi")).toString()).toBe("1536Mi");
    expect(parseQuantity("250m").add(parseQuantity("0.75")).toString()).toBe("1");
  });

  test("milli and whole values round up", () => {
    expect(parseQuantity("1500m").milliValue()).toBe(1500n);
    expect(parseQuantity("1n").milliValue()).toBe(1n);
    expect(parseQuantity("1001m").value()).toBe(2n);
  });
});

describe("quantityFromValue", () => {
  test("a YAML number reads as its text, and spaces are trimmed as the API server's decoder does", () => {
    expect(quantityFromValue(1).toString()).toBe("1");
    expect(quantityFromValue(0.5).toString()).toBe("500m");
    expect(quantityFromValue(" 1 ").toString()).toBe("1");
    expect(() => quantityFromValue(true)).toThrow(QUANTITY_ERRORS.format);
  });
});
