/**
 * kubectl's human durations: the AGE column and the ` (12s ago)` restart suffix. A port of
 * HumanDuration in k8s.io/apimachinery/pkg/util/duration, which gives two or three significant
 * figures: `45s`, `119s`, `2m`, `5m10s`, `15m`, `3h5m`, `20h`, `3d4h`, `10d`, `2y30d`, `9y`.
 */

/** HumanDuration for a span of `ms` milliseconds. Up to 2s in the future counts as now (clock skew). */
export function humanDuration(ms: number): string {
  // Go truncates toward zero (int(d.Seconds())), so -1.9s is -1s: still "0s".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/**
 * Epoch milliseconds of an RFC 3339 timestamp, or undefined when it is unset or unparseable
 * (Go's zero time: the printer then shows `<unknown>` or drops the `ago` suffix).
 */
export function parseTimestamp(timestamp: string | null | undefined): number | undefined {
  if (!timestamp) return undefined;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? undefined : ms;
}

/** kubectl's translateTimestampSince: the time since `timestamp`, or `<unknown>` when unset. */
export function timestampSince(timestamp: string | null | undefined, now: number): string {
  const ms = parseTimestamp(timestamp);
  return ms === undefined ? "<unknown>" : humanDuration(now - ms);
}

/**
 * The most characters humanDuration gives for any span up to `maxMs`: the widest form of each of
 * its ranges the span reaches (`119s`, `9m59s`, `179m`, `7h59m`, `47h`, `7d23h`, `729d`, `7y364d`,
 * then `NNy`). An upper bound for a column of such spans, found without computing each.
 */
export function humanDurationWidth(maxMs: number): number {
  const seconds = Math.trunc(maxMs / 1000);
  if (seconds < 60 * 2) return Math.max(2, String(Math.max(0, seconds)).length + 1);
  if (seconds < 60 * 60 * 24 * 365 * 2) return 5;
  if (seconds < 60 * 60 * 24 * 365 * 8) return 6;
  return Math.max(6, String(Math.floor(seconds / (60 * 60 * 24 * 365))).length + 1);
}
