/**
 * The webhook answers the kubelet keeps (client-go's cached token authenticator and the webhook
 * authorizer's cache): each answer by key until its time to live, the oldest dropped past a bound
 * so a client inventing keys (tokens) cannot grow it without end.
 */
import type { Clock } from "../../clock.ts";

export class ReviewCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 4096,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.clock.now() < entry.expires) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, ttlMs: number): void {
    this.entries.delete(key);
    // A Map iterates in insertion order: the first key is the oldest answer.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: this.clock.now() + ttlMs });
  }
}
