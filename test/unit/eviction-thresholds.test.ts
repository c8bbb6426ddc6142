import { describe, expect, test } from "bun:test";
import { DEFAULT_EVICTION_HARD, formatEvictionHard, parseEvictionHard, thresholdBytes, ThresholdError } from "../../src/eviction/thresholds.ts";

const Mi = 1024n * 1024n;

describe("parseEvictionHard", () => {
  test("nothing given is the kubelet's defaults for memory and nodefs", () => {
    expect(parseEvictionHard("")).toEqual({ "memory.available": { bytes: 100n * Mi }, "nodefs.available": { fraction: 0.1 } });
    expect(formatEvictionHard(parseEvictionHard(""))).toBe(DEFAULT_EVICTION_HARD);
  });

  test("a signal given replaces its default; one left out keeps it", () => {
    expect(parseEvictionHard("nodefs.available<2Gi")).toEqual({ "memory.available": { bytes: 100n * Mi }, "nodefs.available": { bytes: 2048n * Mi } });
    expect(parseEvictionHard("memory.available<5%, nodefs.available<15%")).toEqual({ "memory.available": { fraction: 0.05 }, "nodefs.available": { fraction: 0.15 } });
    expect(formatEvictionHard(parseEvictionHard("nodefs.available<2.5%,memory.available<1G"))).toBe("memory.available<1000000000,nodefs.available<2.5%");
  });

  test("0% and 100% turn a signal off, as the kubelet ignores them", () => {
    expect(parseEvictionHard("nodefs.available<0%")).toEqual({ "memory.available": { bytes: 100n * Mi } });
    const off = formatEvictionHard(parseEvictionHard("nodefs.available<100%,memory.available<0%"));
    expect(off).toBe("memory.available<0%,nodefs.available<0%");
    expect(parseEvictionHard(off)).toEqual({});
  });

  test("refuses what the kubelet refuses, with its wording", () => {
    const refused = (text: string) => {
      try {
        parseEvictionHard(text);
      } catch (error) {
        expect(error).toBeInstanceOf(ThresholdError);
        return (error as Error).message;
      }
      throw new Error(`${text} was accepted`);
    };
    expect(refused("imagefs.available<15%")).toBe("unsupported eviction signal imagefs.available (this agent watches memory.available and nodefs.available)");
    expect(refused("nodefs.available>10%")).toBe('"nodefs.available>10%" is not SIGNAL<VALUE (e.g. nodefs.available<10%)');
    expect(refused("nodefs.available<110%")).toBe("eviction percentage threshold nodefs.available must be <= 100%: 110%");
    expect(refused("nodefs.available<-5%")).toBe("eviction percentage threshold nodefs.available must be >= 0%: -5%");
    expect(refused("nodefs.available<0")).toBe("eviction threshold nodefs.available must be positive: 0");
    expect(refused("nodefs.available<x%")).toBe('eviction threshold nodefs.available: "x%" is not a percentage');
    expect(refused("nodefs.available<lots")).toMatch(/^eviction threshold nodefs.available: "lots": quantities must match/);
  });
});

test("thresholdBytes: a quantity as it is, a percentage of the capacity", () => {
  expect(thresholdBytes({ bytes: 5n }, 1000n)).toBe(5n);
  expect(thresholdBytes({ fraction: 0.1 }, 1000n)).toBe(100n);
  expect(thresholdBytes(undefined, 1000n)).toBe(0n);
});
