/**
 * The report's three faces: text for a terminal (a fixed shape: verdict, evidence, back-off, next
 * steps), markdown for a runbook page or a ticket, and JSON (the same findings as data, times as
 * RFC 3339).
 */
import { iso } from "./evidence.ts";
import type { Evidence, TriageReport } from "./report.ts";

export type TriageFormat = "text" | "json" | "markdown";

const TIME_WIDTH = "2026-01-01T12:00:00Z".length;

function evidenceLine(evidence: Evidence): string {
  return `${(evidence.at === undefined ? "" : iso(evidence.at)).padEnd(TIME_WIDTH)}  ${evidence.text}`;
}

function headline(report: TriageReport): string[] {
  const { pod, container } = report;
  const kind = container.role === "init-blocking" ? "init container, blocking the pod" : container.kind === "sidecar" ? "sidecar" : container.kind === "init" ? "init container" : "app container";
  return [
    `Pod:        ${pod.namespace}/${pod.name} (phase ${pod.phase}, STATUS ${pod.status}, restartPolicy ${pod.restartPolicy})`,
    `Container:  ${container.name} (${kind}), restarts ${container.restartCount}, ${container.state}`,
  ];
}

export function renderText(report: TriageReport): string {
  const out = [...headline(report), "", "Verdict:", `  ${report.verdict.summary}`, ...report.verdict.details.map((d) => `  ${d}`), "", "Evidence:"];
  out.push(...report.evidence.map((e) => `  ${evidenceLine(e)}`));
  if (report.backoff) out.push("", "Back-off:", ...report.backoff.lines.map((line) => `  ${line}`));
  out.push("", "Next steps:");
  for (const [index, step] of report.nextSteps.entries()) {
    const number = `${index + 1}. `;
    if (step.command) out.push(`  ${number}${step.command}`, `  ${" ".repeat(number.length)}${step.text}`);
    else out.push(`  ${number}${step.text}`);
  }
  if (report.alsoInTrouble.length > 0) out.push("", `Also in trouble: ${report.alsoInTrouble.join("; ")}`);
  return `${out.join("\n")}\n`;
}

export function renderMarkdown(report: TriageReport): string {
  const { pod, container } = report;
  const out = [`# Triage: ${pod.namespace}/${pod.name}, container ${container.name}`, "", ...headline(report).map((line) => `- ${line.replace(/:\s+/, ": ")}`), ""];
  out.push("## Verdict", "", `**${report.verdict.summary}**`, "", ...report.verdict.details.flatMap((d) => [d, ""]));
  out.push("## Evidence", "", "| Time | Source | What was recorded |", "| --- | --- | --- |");
  for (const e of report.evidence) out.push(`| ${e.at === undefined ? "" : iso(e.at)} | ${e.source} | ${markdownCell(e.text)} |`);
  out.push("");
  if (report.backoff) out.push("## Back-off", "", ...report.backoff.lines.map((line) => `- ${line}`), "");
  out.push("## Next steps", "");
  for (const [index, step] of report.nextSteps.entries()) {
    out.push(`${index + 1}. ${step.text}`);
    if (step.command) out.push("", "   ```sh", `   ${step.command}`, "   ```");
    out.push("");
  }
  if (report.alsoInTrouble.length > 0) out.push(`Also in trouble: ${report.alsoInTrouble.join("; ")}`, "");
  return out.join("\n").replace(/\n+$/, "\n");
}

function markdownCell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

const TIME_KEYS = new Set(["at", "startedAt", "finishedAt", "nextStartAt", "resetAt"]);

export function renderJson(report: TriageReport): string {
  return `${JSON.stringify(report, (key, value) => (TIME_KEYS.has(key) && typeof value === "number" ? iso(value) : value), 2)}\n`;
}

export function renderReport(report: TriageReport, format: TriageFormat): string {
  switch (format) {
    case "text":
      return renderText(report);
    case "json":
      return renderJson(report);
    case "markdown":
      return renderMarkdown(report);
  }
}
