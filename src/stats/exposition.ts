/**
 * The Prometheus text format (0.0.4) for a handful of families with per-sample timestamps, which
 * the kubelet's /metrics/resource carries and metrics-server reads (prom-client's registry writes
 * no timestamps). Values print as Go's strconv 'g' (what expfmt writes); labels in the order given,
 * which callers keep sorted by name as client_golang writes them.
 */

export interface Sample {
  labels?: Record<string, string>;
  value: number;
  /** Epoch ms; left off when absent. */
  at?: number;
}

export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: Sample[];
}

export function exposition(families: Family[]): string {
  let text = "";
  for (const family of families) {
    text += `# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${family.name} ${family.type}\n`;
    for (const sample of family.samples) {
      let set = "";
      for (const key in sample.labels) set += `${set ? "," : "{"}${key}="${escapeLabel(sample.labels[key]!)}"`;
      if (set) set += "}";
      text += `${family.name}${set} ${goFloat(sample.value)}${sample.at !== undefined ? ` ${Math.floor(sample.at)}` : ""}\n`;
    }
  }
  return text;
}

function escapeLabel(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** strconv.FormatFloat(v, 'g', -1, 64): the shortest digits, exponent form below 1e-4 and from 1e6. */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value === 0) return "0";
  const [mantissa, exponentText] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  return String(value);
}
