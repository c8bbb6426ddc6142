/**
 * The review's three outputs: text for a person, JSON for a script (findings as data), and YAML
 * (the files corrected, each change commented).
 */
import { formatPath } from "../../manifest/errors.ts";
import { applyEdits } from "./apply-edits.ts";
import type { ReviewFile } from "./load.ts";
import type { Finding, Severity, TargetReview } from "./model.ts";

export interface FileReview {
  file: ReviewFile;
  reviews: TargetReview[];
}

export function renderText(files: readonly FileReview[]): string {
  const lines: string[] = [];
  for (const { file, reviews } of files) {
    for (const { target, probes, findings } of reviews) {
      lines.push(`${file.file}: ${target.kind} ${target.name || "<unnamed>"}`);
      const width = Math.max(0, ...probes.map((probe) => `${probe.container} ${probe.probe}`.length));
      for (const probe of probes) lines.push(`  ${`${probe.container} ${probe.probe}`.padEnd(width)}  ${probe.target}: ${probe.note}`);
      if (probes.length === 0) lines.push("  no probes");
      for (const finding of findings) lines.push(...findingLines(finding));
      lines.push("");
    }
  }
  const all = files.flatMap(({ reviews }) => reviews.flatMap((review) => review.findings));
  const objects = files.reduce((sum, { reviews }) => sum + reviews.length, 0);
  lines.push(`${summary(all)} in ${objects} object${objects === 1 ? "" : "s"}`);
  return `${lines.join("\n")}\n`;
}

function findingLines(finding: Finding): string[] {
  const lines = [
    `  ${finding.severity.padEnd(7)} ${finding.id}  ${formatPath(finding.path)}`,
    `          ${finding.message}`,
    `          fix: ${finding.fix}`,
  ];
  for (const line of finding.evidence ?? []) lines.push(`          seen: ${line}`);
  return lines;
}

/** "no findings", or "3 findings (1 error, 1 warning, 1 info)". */
export function summary(findings: readonly Finding[]): string {
  if (findings.length === 0) return "no findings";
  const counts = (["error", "warning", "info"] as Severity[]).flatMap((severity) => {
    const count = findings.filter((finding) => finding.severity === severity).length;
    return count > 0 ? [`${count} ${severity}${count === 1 || severity === "info" ? "" : "s"}`] : [];
  });
  return `${findings.length} finding${findings.length === 1 ? "" : "s"} (${counts.join(", ")})`;
}

export function renderJson(files: readonly FileReview[]): string {
  const data = files.flatMap(({ file, reviews }) =>
    reviews.map(({ target, probes, findings }) => ({
      file: file.path,
      document: target.document,
      kind: target.kind,
      name: target.name,
      probes,
      findings: findings.map((finding) => ({ ...finding, path: formatPath(finding.path) })),
    })),
  );
  return `${JSON.stringify({ objects: data }, null, 2)}\n`;
}

/**
 * Each file with every finding's edits applied (the Documents are edited in place), files one after
 * another as one YAML stream; with several files, each starts with a comment naming it.
 */
export function renderYaml(files: readonly FileReview[]): string {
  const out: string[] = [];
  for (const { file, reviews } of files) {
    file.documents.forEach((document, index) => {
      const edits = reviews.filter((review) => review.target.document === index).flatMap((review) => review.findings.flatMap((finding) => finding.edits ?? []));
      applyEdits(document, edits);
      // Flow collections as people write them (`{path: /x, port: 80}`), not the library's padded `{ ... }`.
      const text = document.toString({ flowCollectionPadding: false });
      const header = files.length > 1 && index === 0 ? `# review: file ${file.path}\n` : "";
      out.push(out.length > 0 && !text.startsWith("---") ? `---\n${header}${text}` : `${header}${text}`);
    });
  }
  return out.join("");
}
