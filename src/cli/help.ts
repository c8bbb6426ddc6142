/**
 * What `minikubelet COMMAND --help` shows beyond cac's usage and options: the command's one-line
 * description as its first line, and examples a user can copy. Kept as data beside the commands.
 */
import type { CAC } from "cac";

/** Examples per command, written as typed after `minikubelet`. */
const EXAMPLES: Record<string, string[]> = {
  run: [
    "run --manifests /etc/minikubelet/manifests --node lab",
    "run --manifests examples --runtime docker --backoff-base 1 --backoff-max 8 --status-file status.json",
  ],
  validate: ["validate examples --node lab"],
  review: ["review deploy.yaml", "review manifests/ -o json", "review web.yaml --describe describe.txt", "review web.yaml --pod web-lab -o yaml > web.fixed.yaml"],
  backoff: ["backoff --backoff-base 1 --backoff-max 8"],
  get: ["get pods", "get pods -A -o wide", "get pod web-lab -o yaml", "get pods -f status.json"],
  describe: ["describe pod web-lab", "describe pod/crash-lab -n demo"],
  triage: ["triage crash-lab", "triage web-lab -c write-index -o markdown", "triage crash-lab -o json --backoff-max 8"],
  events: ["events --for pod/crash-lab --types Warning", "events -w"],
  logs: ["logs crash-lab --previous", "logs web-lab -c write-index", "logs web-lab -f --tail 20"],
  sql: ['sql "SELECT name, phase FROM pods"', "sql --schema"],
  timeline: ["timeline crash-lab", "timeline web-lab -c web --width 120", "timeline crash-lab -o crash-lab.svg"],
  kubeconfig: ["kubeconfig --output ~/.kube/minikubelet", "kubeconfig --db /var/lib/minikubelet/state.db"],
  serve: ["serve --db /var/lib/minikubelet/state.db --api-listen 127.0.0.1:6444"],
  "install-unit": ["install-unit --dry-run", "install-unit --manifests /srv/pods --bin /opt/minikubelet/minikubelet"],
};

/** Adds each command's examples and puts its description at the top of its --help. */
export function describeCommands(cli: CAC): void {
  for (const command of cli.commands) {
    for (const example of EXAMPLES[command.name] ?? []) command.example((bin) => `  $ ${bin} ${example}`);
  }
  cli.help((sections) => {
    const command = cli.matchedCommand;
    if (!command || command.name === "") return sections;
    // cac's header is the bare program name; a command's help starts with what the command does.
    return [{ body: `${cli.name} ${command.name}: ${command.description}` }, ...sections.slice(1)];
  });
}
