/**
 * The time axis: how many columns each span of time gets. Every instant where some row changes
 * (an attempt starts or ends) cuts the axis into slots; each slot gets at least one column, so no
 * attempt and no wait vanishes, and otherwise a width in proportion to its length. The longest
 * slot, when it is more than ten times any other and would take more than half the width, is
 * drawn shorter (compressed) so the rest, usually the newest restarts, stay readable; the axis
 * marks it and its real length stays in its labels.
 */

/** A stretch of the axis: `to === from` for an instant that some row needs a column at (a failed start, an immediate restart). */
export interface Slot {
  from: number;
  to: number;
}

export interface SlotWidths {
  /** Columns per slot, each at least 1. */
  widths: number[];
  /** Indexes of the slots drawn shorter than their length at the scale of the others. */
  compressed: number[];
}

/** The finest scale: one column per 100 ms; a short history is drawn narrower than the width rather than stretched. */
export const MAX_COLUMNS_PER_SECOND = 10;
/** The share of the width one outlying slot may take before it is compressed. */
const CAP_SHARE = 1 / 2;
/** How many times the next longest slot the longest must be to be compressed. */
const OUTLIER_RATIO = 10;

/** Splits `columns` among `slots` (which must number at most `columns`). */
export function slotWidths(slots: Slot[], columns: number): SlotWidths {
  const lengths = slots.map((slot) => slot.to - slot.from);
  const [, secondLongest] = [...lengths].sort((a, b) => b - a);
  const outlier = secondLongest ? OUTLIER_RATIO * secondLongest : Infinity;
  const cap = Math.max(1, Math.floor(columns * CAP_SHARE));
  const widthAt = (scale: number, length: number) => {
    if (length === 0) return 1;
    const linear = Math.max(1, (length * scale) / 1000);
    return length > outlier ? Math.min(cap, linear) : linear;
  };
  const total = (scale: number) => lengths.reduce((sum, length) => sum + widthAt(scale, length), 0);
  // The total only grows with the scale: bisect for the largest scale that fits.
  let low = 0;
  let high = MAX_COLUMNS_PER_SECOND;
  if (total(high) > columns) {
    for (let round = 0; round < 60; round++) {
      const mid = (low + high) / 2;
      if (total(mid) <= columns) low = mid;
      else high = mid;
    }
  } else low = high;
  const scale = low;
  const exact = lengths.map((length) => widthAt(scale, length));
  // Columns the capped slots left unused (a short history at the finest scale) go back to them.
  let spare = columns - exact.reduce((sum, width) => sum + width, 0);
  const capped = lengths.map((length, index) => ({ index, want: (length * scale) / 1000 - exact[index]! })).filter((slot) => slot.want > 0);
  const wanted = capped.reduce((sum, slot) => sum + slot.want, 0);
  if (wanted > 0 && spare > 0) {
    const share = Math.min(1, spare / wanted);
    for (const slot of capped) exact[slot.index]! += slot.want * share;
    spare -= wanted * share;
  }
  const widths = roundPreservingTotal(exact);
  const compressed = lengths.flatMap((length, index) => (length > 0 && (length * scale) / 1000 - widths[index]! >= 1 ? [index] : []));
  return { widths, compressed };
}

/** Whole columns, each at least 1, adding up to the rounded total of `exact` (largest remainders first). */
function roundPreservingTotal(exact: number[]): number[] {
  const widths = exact.map((width) => Math.max(1, Math.floor(width)));
  let missing = Math.round(exact.reduce((sum, width) => sum + width, 0)) - widths.reduce((sum, width) => sum + width, 0);
  const byRemainder = exact.map((width, index) => ({ index, remainder: width - Math.floor(width) })).sort((a, b) => b.remainder - a.remainder || b.index - a.index);
  for (const { index } of byRemainder) {
    if (missing <= 0) break;
    widths[index]!++;
    missing--;
  }
  return widths;
}
