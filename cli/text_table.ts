/**
 * Plain-text tables and the terminal's width, for the commands' output.
 *
 * @module
 */

/**
 * Columns padded to their widest cell, two spaces apart.
 *
 * @example
 * ```ts
 * import { table } from "./text_table.ts";
 * console.log(table(["a", "b"], [["1", "22"]])); // "a  b\n1  22"
 * ```
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/**
 * The terminal's width in columns, or 80 when stdout is not a terminal.
 *
 * @example
 * ```ts
 * import { terminalWidth } from "./text_table.ts";
 * console.log(terminalWidth() > 0); // true
 * ```
 */
export function terminalWidth(): number {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 80;
  } catch {
    return 80;
  }
}
