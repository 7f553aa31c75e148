// A tiny terminal emulator for tests: applies what the screen renders (cursor moves, SGR, clear,
// text with wide characters) to a grid of cells, so a test can check that the bytes the diff
// renderer wrote really leave the terminal showing the composed frame.

import { forEachCluster } from "@amber/core/cells";

// deno-lint-ignore no-control-regex -- parsing escape sequences is the point
const CSI = /^\x1b\[(\??)([\d;]*)([A-Za-z~])/;

export class VirtualTerminal {
  cells: string[][];
  row = 0;
  col = 0;
  cursorVisible = true;
  bytes = 0;
  top = 0;
  bottom: number;
  scrolled = 0;

  // A terminal that draws each code point of an emoji sequence on its own (as some do), to show
  // the renderer does not depend on agreeing with the terminal about those.
  splitSequences = false;

  constructor(public width: number, public height: number) {
    this.cells = Array.from({ length: height }, () => Array(width).fill(" "));
    this.bottom = height;
  }

  resize(width: number, height: number): void {
    this.width = width;
    this.height = height;
    this.top = 0;
    this.bottom = height;
    this.cells = Array.from({ length: height }, () => Array(width).fill(" "));
  }

  write(text: string): void {
    this.bytes += new TextEncoder().encode(text).length;
    let i = 0;
    while (i < text.length) {
      if (text[i] === "\x1b") {
        const match = CSI.exec(text.slice(i));
        if (!match) throw new Error(`unknown escape at ${JSON.stringify(text.slice(i, i + 10))}`);
        this.#csi(match[1], match[2], match[3]);
        i += match[0].length;
        continue;
      }
      // The next run of printable text, up to the next escape.
      let end = text.indexOf("\x1b", i);
      if (end < 0) end = text.length;
      forEachCluster(text.slice(i, end), (cluster, width) => {
        if (this.splitSequences && [...cluster].length > 1 && width === 2) {
          for (const point of cluster) this.#print(point, 2);
        } else this.#print(cluster, width);
      });
      i = end;
    }
  }

  #csi(private_: string, params: string, final: string): void {
    const numbers = params.split(";").map((p) => (p === "" ? 0 : Number(p)));
    if (private_ === "?") {
      if (params === "25") this.cursorVisible = final === "h";
      return;
    }
    switch (final) {
      case "H":
        this.row = Math.max(1, numbers[0] || 1) - 1;
        this.col = Math.max(1, numbers[1] || 1) - 1;
        return;
      case "C":
        this.col += numbers[0] || 1;
        return;
      case "J":
        if (numbers[0] === 2) {
          this.cells = Array.from({ length: this.height }, () => Array(this.width).fill(" "));
        }
        return;
      case "m":
        return;
      case "K": {
        const line = this.cells[this.row];
        if (line[this.col] === "" && this.col > 0) line[this.col - 1] = " ";
        for (let c = this.col; c < this.width; c++) line[c] = " ";
        return;
      }
      case "r":
        this.top = params === "" ? 0 : numbers[0] - 1;
        this.bottom = params === "" ? this.height : numbers[1];
        this.row = 0;
        this.col = 0;
        return;
      case "S": {
        const n = numbers[0] || 1;
        const region = this.cells.slice(this.top, this.bottom);
        const shifted = [
          ...region.slice(n),
          ...Array.from({ length: Math.min(n, region.length) }, () => Array(this.width).fill(" ")),
        ];
        this.cells.splice(this.top, region.length, ...shifted);
        this.scrolled += n;
        return;
      }
      default:
        throw new Error(`unsupported CSI ${params}${final}`);
    }
  }

  #print(cluster: string, width: number): void {
    if (width === 0) return;
    if (this.row >= this.height || this.col + width > this.width) {
      if (this.splitSequences) return; // a real terminal would clip (or wrap); it is its problem
      throw new Error(`wrote '${cluster}' past the edge at ${this.row},${this.col}`);
    }
    const line = this.cells[this.row];
    // Overwriting half of a wide character erases the other half, as terminals do.
    if (line[this.col] === "") line[this.col - 1] = " ";
    if (width === 1 && line[this.col + 1] === "") line[this.col + 1] = " ";
    line[this.col] = cluster;
    if (width === 2) {
      if (line[this.col + 2] === "") line[this.col + 2] = " ";
      line[this.col + 1] = "";
    }
    this.col += width;
  }

  rowText(row: number): string {
    return this.cells[row].join("");
  }

  text(): string {
    return this.cells.map((line) => line.join("").trimEnd()).join("\n");
  }
}
