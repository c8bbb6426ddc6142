/**
 * `minikubelet review FILE|DIR [-o text|json|yaml] [--describe FILE] [--db PATH --pod NAME]`:
 * reviews every probe of each Pod or workload pod template in the files, backed by what happened
 * (a `kubectl describe pod` text, or a pod in our database) when given. Exit 0 when no finding is
 * a warning or an error, 1 otherwise or when a file cannot be read (one line naming the file and
 * the field path, the other files still reviewed), 2 for a usage error.
 */
import { readFileSync } from "node:fs";
import { ManifestError } from "../manifest/errors.ts";
import type { PodHistory } from "../tools/review/history.ts";
import { parseDescribeText } from "../tools/review/describe-text.ts";
import { loadReviewFile, reviewPaths } from "../tools/review/load.ts";
import { failsReview } from "../tools/review/model.ts";
import { renderJson, renderText, renderYaml, type FileReview } from "../tools/review/render.ts";
import { reviewTarget } from "../tools/review/reviewer.ts";
import { storeHistory } from "../tools/review/store-history.ts";
import { openStoreReader } from "../store/reader.ts";
import { UsageError, UserError } from "./errors.ts";
import { processOutput, type CommandOutput } from "./stdio.ts";

export interface ReviewCommandOptions {
  output?: unknown;
  describe?: unknown;
  db?: string;
  pod?: unknown;
  namespace?: unknown;
}

const FORMATS = ["text", "json", "yaml"] as const;
export type Format = (typeof FORMATS)[number];

export function reviewCommand(path: string, options: ReviewCommandOptions, output: CommandOutput = processOutput): number {
  const format = (options.output ?? "text") as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`-o must be ${FORMATS.join(", ")} (got ${JSON.stringify(options.output)})`);
  const history = readHistory(options);
  let paths: string[];
  try {
    paths = reviewPaths(path);
  } catch (error) {
    if (error instanceof ManifestError) throw new UserError(error.message);
    throw error;
  }
  return reviewFiles(paths, { format, history }, output);
}

/**
 * Reviews each file and writes the result in `format`; a file that cannot be read is one error
 * line and the others are still reviewed. Returns the exit code (1 on a warning, an error or a bad file).
 */
export function reviewFiles(paths: readonly string[], options: { format: Format; history?: PodHistory }, output: CommandOutput = processOutput): number {
  const files: FileReview[] = [];
  let refused = 0;
  for (const file of paths) {
    try {
      const loaded = loadReviewFile(file);
      files.push({ file: loaded, reviews: loaded.targets.map((target) => reviewTarget(target, options.history)) });
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      output.err(`error: ${error.message}\n`);
      refused += 1;
    }
  }
  if (options.history) warnUnmatched(options.history, files, output);
  output.out(renderReview(files, options.format));
  const failing = files.some(({ reviews }) => reviews.some((review) => review.findings.some(failsReview)));
  return failing || refused > 0 ? 1 : 0;
}

export function renderReview(files: readonly FileReview[], format: Format): string {
  if (format === "json") return renderJson(files);
  if (format === "yaml") return renderYaml(files);
  return renderText(files);
}

/** Evidence is matched by container name: say so when none of them matches, rather than use nothing silently. */
function warnUnmatched(history: PodHistory, files: readonly FileReview[], output: CommandOutput): void {
  const reviewed = new Set(files.flatMap(({ reviews }) => reviews.flatMap((review) => review.target.containers.map((container) => container.name))));
  if ([...history.keys()].some((name) => reviewed.has(name))) return;
  output.err(`Warning: the pod's containers (${[...history.keys()].join(", ")}) are not in the reviewed manifests (${[...reviewed].join(", ") || "none"}): no evidence used\n`);
}

function readHistory(options: ReviewCommandOptions): PodHistory | undefined {
  if (options.describe !== undefined && options.pod !== undefined) throw new UsageError("--describe and --pod both give what happened; use one");
  if (options.describe !== undefined) {
    const file = String(options.describe);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new UserError(`--describe ${file}: cannot read: ${(error as Error).message}`);
    }
    const history = parseDescribeText(text);
    if (history.size === 0) throw new UserError(`--describe ${file}: no Containers section found; expected the output of kubectl describe pod`);
    return history;
  }
  if (options.pod === undefined) {
    if (options.db !== undefined) throw new UsageError("--db needs --pod NAME: the pod whose history backs the review");
    return undefined;
  }
  const pod = String(options.pod);
  const namespace = options.namespace === undefined ? undefined : String(options.namespace);
  using reader = openStoreReader(options.db);
  const history = storeHistory(reader.store, pod, namespace);
  if (!history) throw new UserError(`pod "${pod}" not found in ${reader.path}`);
  return history;
}
