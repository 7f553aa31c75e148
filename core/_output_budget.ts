// A budget on one tool call's streamed output (`ToolCallContext.output`): every chunk becomes an
// event a front end keeps, so a tool flooding output would otherwise grow the host without
// bound. Past the budget one note says the rest was dropped and nothing more is forwarded. The
// kernel puts every call's output through one; the sandbox proxy too, before the chunks of a
// plugin process reach the kernel.

/**
 * How much output one call may forward, in characters; every chunk also costs
 * {@linkcode OUTPUT_CHUNK_COST} more, so a flood of tiny chunks runs out too.
 */
export const MAX_FORWARDED_OUTPUT = 1_048_576;

/** What a chunk costs besides its characters: the event it becomes. */
export const OUTPUT_CHUNK_COST = 64;

/**
 * One call's output: forwards chunks to `send` until the budget is spent,
 * then says once that the rest was dropped.
 */
export class OutputBudget {
  readonly #send: (chunk: string) => void;
  readonly #what: string;
  #left: number;
  #spent = false;

  /** Forwards to `send` at most `max` (characters plus the cost of each chunk). */
  constructor(send: (chunk: string) => void, what: string, max: number = MAX_FORWARDED_OUTPUT) {
    this.#send = send;
    this.#what = what;
    this.#left = max;
  }

  /** Takes one chunk from the process. */
  take(chunk: string): void {
    if (this.#spent || chunk === "") return;
    const cost = chunk.length + OUTPUT_CHUNK_COST;
    if (cost <= this.#left) {
      this.#left -= cost;
      this.#send(chunk);
      return;
    }
    this.#spent = true;
    const room = this.#left - OUTPUT_CHUNK_COST;
    if (room > 0) this.#send(chunk.slice(0, room));
    this.#send(`\n[${this.#what} streamed too much output; the rest is not shown]\n`);
  }
}
