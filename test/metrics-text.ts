/** Reads one sample out of Prometheus text: `sample(text, 'kubelet_running_containers{container_state="running"}')`; undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    if (line.slice(0, at) === series) return Number(line.slice(at + 1));
  }
  return undefined;
}
