import type { Probe, ProbeKind } from "../src/manifest/types.ts";
import type { ProbeRunner } from "../src/prober/probe-manager.ts";
import type { FakeClock } from "./fake-clock.ts";
import type { FakeRuntime } from "./fake-runtime.ts";

export interface ScriptedResult {
  ok: boolean;
  message?: string;
  /** How long the probe takes, on the fake clock. */
  durationMs?: number;
}

/**
 * Answers probes from a script keyed by "container/kind" (e.g. "web/readiness"), recording every
 * call with its time. A key without a script succeeds at once.
 */
export class ScriptedProber implements ProbeRunner {
  readonly calls: Array<{ key: string; at: number }> = [];
  readonly scripts = new Map<string, (call: number) => ScriptedResult>();

  constructor(
    private readonly runtime: FakeRuntime,
    private readonly clock: FakeClock,
  ) {}

  private containerName(id: string): string {
    return this.runtime.containers.get(id)?.config.container.name ?? id;
  }

  async probe(_probe: Probe, target: { containerId: string; podIP: string; kind: ProbeKind }) {
    const key = `${this.containerName(target.containerId)}/${target.kind}`;
    const call = this.calls.filter((c) => c.key === key).length;
    this.calls.push({ key, at: this.clock.now() });
    const result = this.scripts.get(key)?.(call) ?? { ok: true };
    const answer = { ok: result.ok, message: result.message ?? (result.ok ? "" : "HTTP probe failed with statuscode: 503") };
    if (!result.durationMs) return answer;
    return new Promise<typeof answer>((resolve) => this.clock.setTimeout(() => resolve(answer), result.durationMs!));
  }

  /** Seconds (from `start`) at which `key` was probed. */
  times(key: string, start: number): number[] {
    return this.calls.filter((c) => c.key === key).map((c) => (c.at - start) / 1000);
  }
}
