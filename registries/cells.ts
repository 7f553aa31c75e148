/**
 * Terminal cell widths, for hosts that lay text out on a grid of cells (the status bar, a
 * terminal UI): how many columns a string takes, how to cut it to a number of columns, and how
 * to walk it one cell cluster at a time. East Asian wide characters and emoji take two cells;
 * combining marks, joiners and format characters take none.
 *
 * @example
 * ```ts
 * import { cellWidth, truncateToCells } from "@amber/registries/cells";
 * console.log(cellWidth("中文 ok"), truncateToCells("deepseek-chat", 8)); // 7 "deepsee…"
 * ```
 *
 * @module
 */

export { cellWidth, codePointWidth, forEachCluster, truncateToCells } from "./_cell_width.ts";
