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
