// The message of what a plugin threw, for an answer, an error or a log line: its message alone,
// as the registries word a plugin's failure in amber's process.

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    // A value whose toString throws still deserves a message rather than a second throw.
    return "unknown error";
  }
}
