/**
 * The frame both renderers share: each row's label and how much of the width is left for the plot.
 */
import type { TimelineContainer } from "./model.ts";

/** The narrowest width accepted: a label and a plot still fit. */
export const MIN_WIDTH = 40;
/** Labels past this are cut with an ellipsis. */
export const MAX_LABEL = 24;
/** Spaces between the labels and the plot. */
export const GUTTER = 2;
/** The narrowest plot worth drawing, whatever the labels leave. */
const MIN_PLOT = 20;

/** `web`, or `write-index (init)` / `proxy (sidecar)` for the containers that are not app containers. */
export function rowLabel(container: TimelineContainer): string {
  return container.kind === "app" ? container.name : `${container.name} (${container.kind})`;
}

/** The label column's width, and the plot's once the labels and the column for `now` are taken out of `width`. */
export function plotColumns(containers: TimelineContainer[], width: number): { label: number; plot: number } {
  const label = Math.min(MAX_LABEL, Math.max(0, ...containers.map((c) => rowLabel(c).length)));
  return { label, plot: Math.max(MIN_PLOT, width - label - GUTTER - 1) };
}
