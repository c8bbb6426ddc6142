/**
 * Go's time.Duration.String() for whole and fractional seconds: 0s, 1s, 1.5s, 1m30s, 1h0m0s.
 * kubectl describe prints probe timings this way, and we print them the same.
 */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  const negative = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${negative ? "-" : ""}${trimFraction(rest)}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = trimFraction(rest / 1000);
  const sign = negative ? "-" : "";
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

function trimFraction(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(9)));
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const GO_DURATION = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)/;

/** Go's time.ParseDuration for non-negative values (`24h`, `1h30m`, `90s`, `1.5h`), in ms; undefined when it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0") return 0;
  let rest = text;
  let ms = 0;
  while (rest.length > 0) {
    const match = GO_DURATION.exec(rest);
    if (!match) return undefined;
    const unit = /(ns|us|µs|ms|s|m|h)$/.exec(match[0])![1]!;
    ms += Number(match[0].slice(0, -unit.length)) * UNIT_MS[unit]!;
    rest = rest.slice(match[0].length);
  }
  return text.length > 0 ? ms : undefined;
}
