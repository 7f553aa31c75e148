// A sandboxed tool's streamed output (`ToolCallContext.output`) crossing the process boundary.
// It rides the call's `$/progress` notifications as a tagged value, `{ output: chunk }`, next
// to the plain strings of `progress`, so both keep their order on the one channel and need no
// method of their own. The host forwards what arrives only up to a budget per call
// (`core/_output_budget.ts`), before the chunks reach the kernel.

/** A `$/progress` value that carries output, not a progress message. */
export interface OutputProgress {
  /** The chunk of output. */
  readonly output: string;
}

/** The `$/progress` value for a chunk of output. */
export function outputProgress(chunk: string): OutputProgress {
  return { output: chunk };
}

/** Whether a `$/progress` value carries output (anything else is a progress message). */
export function isOutputProgress(value: unknown): value is OutputProgress {
  return typeof value === "object" && value !== null &&
    typeof (value as { output?: unknown }).output === "string";
}
