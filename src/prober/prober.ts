/**
 * Runs one probe, whatever its handler, like the kubelet's pkg/kubelet/prober/prober.go: exec
 * through the runtime, httpGet, tcpSocket and grpc from the node to the pod IP. Stateless: every call is
 * independent, so probes run concurrently and a hung endpoint costs its own timeout only.
 * Scheduling and thresholds live in tracker.ts.
 */
import type { Clock } from "../clock.ts";
import type { Probe, ProbeKind } from "../manifest/types.ts";
import { execProbe, type ExecFn } from "./exec-probe.ts";
import { grpcProbe } from "./grpc-probe.ts";
import { httpProbe } from "./http-probe.ts";
import type { ProbeResult } from "./probe-result.ts";
import { tcpProbe } from "./tcp-probe.ts";

export type { ProbeResult } from "./probe-result.ts";
export type { ExecFn } from "./exec-probe.ts";

export interface ProberOptions {
  /** Arms every probe timeout, so a FakeClock can expire them in tests. */
  clock: Clock;
  /** The runtime's execSync (or anything shaped like it). */
  exec: ExecFn;
}

/** Which container a probe runs against, and where its network lives. */
export interface ProbeTarget {
  containerId: string;
  /** Where grpc probes connect, and httpGet / tcpSocket probes that leave `host` empty. */
  podIP: string;
  kind: ProbeKind;
}

/** The kubelet runs an errored probe up to this many times before giving up (maxProbeRetries). */
const MAX_ATTEMPTS = 3;

export class Prober {
  private readonly clock: Clock;
  private readonly exec: ExecFn;

  constructor(options: ProberOptions) {
    this.clock = options.clock;
    this.exec = options.exec;
  }

  /**
   * Runs `probe` once against `target` and never rejects. `ok` is the probe's verdict; `message`
   * is the kubelet's text for the Unhealthy (or, with `warning`, ProbeWarning) event. A probe that
   * could not run (`errored`) is retried like the kubelet does, up to 3 attempts.
   */
  async probe(probe: Probe, target: ProbeTarget): Promise<ProbeResult> {
    let result = await this.runOnce(probe, target);
    for (let attempt = 1; result.errored && attempt < MAX_ATTEMPTS; attempt++) {
      result = await this.runOnce(probe, target);
    }
    return result;
  }

  private runOnce(probe: Probe, target: ProbeTarget): Promise<ProbeResult> {
    const timeoutMs = probe.timeoutSeconds * 1000;
    const handler = probe.handler;
    switch (handler.type) {
      case "exec":
        return execProbe(this.exec, this.clock, target.containerId, handler.command, timeoutMs);
      case "httpGet":
        return httpProbe(this.clock, handler, target.podIP, timeoutMs);
      case "tcpSocket":
        return tcpProbe(this.clock, handler.host || target.podIP, handler.port, timeoutMs);
      case "grpc":
        return grpcProbe(this.clock, handler, target.podIP, timeoutMs);
      default:
        return assertNever(handler);
    }
  }
}

function assertNever(value: never): never {
  throw new Error(`unknown probe handler: ${JSON.stringify(value)}`);
}
