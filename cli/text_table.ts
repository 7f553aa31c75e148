/**
 * Plain-text tables and the terminal's width, for the commands' output. Widths are terminal
 * cells, so a column holding CJK text or emoji stays aligned.
 *
 * @module
 */

import { plainText } from "./plain_text.ts";
import { cellWidth } from "@amber/core/cells";

/**
 * `text` padded with spaces on the right to `cells` terminal cells; text that wide or wider is
 * returned as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { padEndToCells } from "./text_table.ts";
 * assert.equal(padEndToCells("ab", 4), "ab  ");
 * assert.equal(padEndToCells("中文", 6), "中文  ");
 * assert.equal(padEndToCells("long", 2), "long");
 * ```
 */
export function padEndToCells(text: string, cells: number): string {
  const width = cellWidth(text);
  return width >= cells ? text : text + " ".repeat(cells - width);
}

/**
 * Columns padded to their widest cell, two spaces apart.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { table } from "./text_table.ts";
 * assert.equal(table(["a", "b"], [["1", "22"]]), "a  b\n1  22");
 * assert.equal(table(["name", "id"], [["中文", "x"]]), "name  id\n中文  x");
 * ```
 */
export function table(header: readonly string[], given: readonly (readonly string[])[]): string {
  // A cell may quote a plugin (its name, why it failed): no escape sequence of its gets through.
  const rows = given.map((row) => row.map((cell) => plainText(cell).replaceAll("\n", " ")));
  const widths = header.map((h, i) => Math.max(cellWidth(h), ...rows.map((r) => cellWidth(r[i]))));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => padEndToCells(c, widths[i])).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/**
 * The terminal's width in columns, or 80 when stdout is not a terminal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { terminalWidth } from "./text_table.ts";
 * assert.ok(terminalWidth() > 0);
 * ```
 */
export function terminalWidth(): number {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 80;
  } catch {
    return 80;
  }
}
