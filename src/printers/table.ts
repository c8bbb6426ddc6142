/**
 * kubectl's column layout: left-aligned cells, columns separated by three spaces, no trailing
 * padding on the last column.
 */
export function formatTable(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  // A loop, not Math.max(...cells): a spread of a million rows overflows the stack.
  const widths = headers.map((_, column) => all.reduce((width, row) => Math.max(width, (row[column] ?? "").length), 0));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]! + 3)))
        .join("")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
