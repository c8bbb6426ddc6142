/**
 * The stats collector: reads the node and each running container on its own timer (the kubelet's
 * cadvisor housekeeping, 10 s by default), never on the loop's path, and keeps the last two
 * readings of each so the summary can give rates (usageNanoCores) and metrics.k8s.io its window.
 * Serves StatsSource (the kubelet server's /stats/summary and /metrics/resource) and MetricsSource
 * (the API's metrics.k8s.io) from what it last read.
 *
 * The containers and their volumes are read only while someone reads the figures (a request within
 * STATS_DEMAND_WINDOW_MS), as the kubelet's CRI stats provider reads a container's stats when they
 * are asked for: an idle node with a thousand pods and no scraper reads nothing per container. The
 * first request after a quiet spell waits for one round (the pods' figures then have no rate yet,
 * as right after a start); metrics.k8s.io, which answers at once, has them from the next round.
 */
import type { Clock } from "../clock.ts";
import type { ContainerManager, ImageManager, SandboxManager } from "../runtime/runtime.ts";
import type { V1Pod } from "../v1/v1.ts";
import { fsFigures, readNode, type NodeFiles, type NodeReading } from "./node-usage.ts";
import { advance, nanoCores, type ContainerRef, type ContainerSamples, type SampleSet, type VolumeSample } from "./samples.ts";
import { readVolume } from "./volume-usage.ts";
import { resourceMetricsText } from "./resource-metrics.ts";
import { buildSummary, runningContainers } from "./summary.ts";
import type { ContainerUsageWindow, MetricsSource, StatsSource, UsageWindow } from "./stats-source.ts";

/** The kubelet's --housekeeping-interval default. */
export const DEFAULT_HOUSEKEEPING_MS = 10_000;

/**
 * Containers read at once. A reading starts with a little synchronous work (the process runtime's
 * status files); a few at a time keeps each stretch short, so the loop's own work runs between them.
 */
const READ_CONCURRENCY = 4;

/**
 * How long after a request for figures the timer goes on reading the containers: longer than any
 * scraper's period (metrics-server's 15-60 s, Prometheus's 15 s-1 min), so a scraped node is read
 * every round and its rates stay current.
 */
export const STATS_DEMAND_WINDOW_MS = 5 * 60_000;

/** The kubelet's --volume-stats-agg-period default: a volume is walked at most this often. */
export const DEFAULT_VOLUME_STATS_MS = 60_000;

export interface StatsCollectorOptions {
  nodeName: string;
  runtime: Pick<ContainerManager, "containerUsage"> & Partial<Pick<SandboxManager, "emptyDirPath"> & Pick<ImageManager, "imageFsUsage">>;
  /** The pods as last served (the loop's in-memory view): which containers run, and whose they are. */
  pods: () => V1Pod[];
  clock: Clock;
  /** Between two rounds; default DEFAULT_HOUSEKEEPING_MS. */
  intervalMs?: number;
  /** Between two walks of one emptyDir volume; default DEFAULT_VOLUME_STATS_MS. */
  volumeIntervalMs?: number;
  /** Where the node's figures are read (tests point `proc` at a fake tree). */
  node: NodeFiles;
  log?: (message: string) => void;
}

export class StatsCollector implements StatsSource, MetricsSource {
  private samples: SampleSet = { containers: new Map(), volumes: new Map() };
  private cancel: (() => void) | undefined;
  private running = false;
  /** Set by stop(): a round it cut short says nothing of what failed under the closing runtime. */
  private stopped = false;
  private inFlight: Promise<void> | undefined;
  private readonly intervalMs: number;
  private lastError: string | undefined;
  /** Drawn once per round, however often they are asked for (a scrape every 100 ms costs one drawing). */
  private drawn: { summary?: unknown; metrics?: string } = {};
  /** When the figures were last asked for; undefined: never. */
  private askedAt: number | undefined;
  /** The round under way reads the containers too. */
  private inFlightReadsContainers = false;
  /** When the last round that read the containers began; undefined: none yet. */
  private containersReadAt: number | undefined;

  constructor(private readonly options: StatsCollectorOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_HOUSEKEEPING_MS;
  }

  /** Reads at once, then every interval. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.tick();
  }

  /** Stops the timer; resolves once a round under way has finished (before the runtime is closed under it). Idempotent. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
    await this.inFlight;
  }

  private tick(): void {
    this.cancel = undefined;
    void this.round(this.inDemand()).finally(() => {
      if (this.running) this.cancel = this.options.clock.setTimeout(() => this.tick(), this.intervalMs);
    });
  }

  /**
   * One round: the node, then every running container, asked for as a request asks (so the timer
   * goes on reading the containers). Rounds never overlap: a second call joins the first.
   */
  sample(): Promise<void> {
    this.askedAt = this.options.clock.now();
    return this.round(true);
  }

  private async round(containers: boolean): Promise<void> {
    // A round of the node alone under way does not answer for the containers: one follows it.
    if (this.inFlight && containers && !this.inFlightReadsContainers) await this.inFlight;
    if (!this.inFlight) {
      this.inFlightReadsContainers = containers;
      this.inFlight = this.readAll(containers).finally(() => (this.inFlight = undefined));
    }
    return this.inFlight;
  }

  private inDemand(): boolean {
    return this.askedAt !== undefined && this.options.clock.now() - this.askedAt <= STATS_DEMAND_WINDOW_MS;
  }

  /** The figures are asked for: when the containers were not read within the interval, a round of them at once (waited for by `wait`). */
  private asked(wait: boolean): Promise<void> {
    const now = this.options.clock.now();
    this.askedAt = now;
    if (this.containersReadAt !== undefined && now - this.containersReadAt < this.intervalMs) return Promise.resolve();
    const reading = this.sample();
    return wait ? reading : Promise.resolve();
  }

  private async readAll(readContainers: boolean): Promise<void> {
    const { clock, runtime } = this.options;
    const pods = this.options.pods();
    // Not asked for lately: the node alone, and the containers' figures forgotten rather than kept stale.
    const refs = readContainers ? pods.flatMap(runningContainers) : [];
    if (readContainers) this.containersReadAt = clock.now();
    const errors: string[] = [];
    let node: NodeReading | undefined;
    try {
      node = readNode(this.options.node, clock.now());
    } catch (error) {
      errors.push(`node: ${(error as Error).message}`);
    }
    if (node && runtime.imageFsUsage) {
      try {
        const images = await runtime.imageFsUsage();
        const fs = fsFigures(images.path);
        node.imageFs = { usedBytes: images.usedBytes, ...(fs && { fs }) };
      } catch (error) {
        errors.push(`image filesystem: ${(error as Error).message}`);
      }
    }
    const readings = await eachLimited(refs, READ_CONCURRENCY, async (ref) => {
      try {
        return { ref, usage: await runtime.containerUsage?.(ref.id) };
      } catch (error) {
        errors.push(`container ${ref.id}: ${(error as Error).message}`);
        return { ref, usage: undefined };
      }
    });
    const previous = this.samples;
    const containers = new Map<string, ContainerSamples>();
    for (const { ref, usage } of readings) {
      if (!usage) continue;
      containers.set(ref.id, { ref, ...advance(previous.containers.get(ref.id), usage) });
    }
    const volumes = readContainers ? await this.readVolumes(pods, new Set(refs.map((ref) => ref.podUid)), previous.volumes) : new Map<string, VolumeSample>();
    const error = errors.length > 0 ? errors.join("; ") : undefined;
    // Said once per distinct failure, not once a round; a round cut short by the agent stopping says nothing.
    if (error && error !== this.lastError && !this.stopped) this.options.log?.(`stats: ${error}`);
    this.lastError = error;
    this.samples = { node: node ? advance(previous.node, node) : previous.node, containers, volumes, ...(error && { error }) };
    this.drawn = {};
  }

  /** The emptyDir volumes of the pods with a running container; one walked within the volume period is kept as it was. */
  private async readVolumes(pods: V1Pod[], running: Set<string>, previous: Map<string, VolumeSample>): Promise<Map<string, VolumeSample>> {
    const { clock, runtime } = this.options;
    if (!runtime.emptyDirPath) return new Map();
    const period = this.options.volumeIntervalMs ?? DEFAULT_VOLUME_STATS_MS;
    const now = clock.now();
    // In the pods' and their specs' order, each walk at once.
    const walks: Promise<[string, VolumeSample | undefined]>[] = [];
    for (const pod of pods) {
      const uid = pod.metadata.uid ?? "";
      if (!running.has(uid)) continue;
      for (const volume of (pod.spec as { volumes?: { name: string; emptyDir?: { medium?: string } }[] }).volumes ?? []) {
        if (!volume.emptyDir) continue;
        const key = `${uid}/${volume.name}`;
        const kept = previous.get(key);
        if (kept && now - kept.at < period) {
          walks.push(Promise.resolve([key, kept]));
          continue;
        }
        const memory = volume.emptyDir.medium === "Memory";
        const path = runtime.emptyDirPath(uid, volume.name, volume.emptyDir.medium);
        if (path === undefined) continue;
        walks.push(readVolume(path, now).then((reading) => [key, reading && { ...reading, podUid: uid, name: volume.name, memory }]));
      }
    }
    const volumes = new Map<string, VolumeSample>();
    for (const [key, sample] of await Promise.all(walks)) if (sample) volumes.set(key, sample);
    return volumes;
  }

  async summary(): Promise<unknown> {
    await this.asked(true);
    return (this.drawn.summary ??= buildSummary(this.options.nodeName, this.samples, this.options.pods()));
  }

  async resourceMetrics(): Promise<string> {
    await this.asked(true);
    return (this.drawn.metrics ??= resourceMetricsText(this.samples));
  }

  nodeUsage(): UsageWindow | undefined {
    void this.asked(false);
    const node = this.samples.node;
    const cpu = node && nanoCores(node);
    if (!node?.prev || cpu === undefined || !node.last.memory) return undefined;
    return { timestamp: node.last.at, windowMs: node.last.at - node.prev.at, cpuNanoCores: cpu, memoryBytes: node.last.memory.workingSetBytes };
  }

  podUsage(uid: string): ContainerUsageWindow[] | undefined {
    void this.asked(false);
    const windows: ContainerUsageWindow[] = [];
    for (const samples of this.samples.containers.values()) {
      if (samples.ref.podUid !== uid) continue;
      const cpu = nanoCores(samples);
      // As metrics-server: a pod is served once each of its containers has a window.
      if (!samples.prev || cpu === undefined) return undefined;
      windows.push({ name: samples.ref.name, timestamp: samples.last.at, windowMs: samples.last.at - samples.prev.at, cpuNanoCores: cpu, memoryBytes: samples.last.memory?.workingSetBytes ?? 0 });
    }
    return windows.length > 0 ? windows : undefined;
  }
}

export type { ContainerRef };

/** `work` over `items`, at most `limit` at a time, results in the items' order. */
async function eachLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
