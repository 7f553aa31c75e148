/**
 * What a failed connection reads as in the client's messages: a short reason instead of the
 * runtime's request dump. Private to the package.
 *
 * @module
 */

/** A short reason for a failed connection, without the runtime's request dump. */
export function networkReason(error: unknown): string {
  const chain: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    chain.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  const text = chain.join(" ");
  if (/connection refused|ECONNREFUSED/i.test(text)) return "connection refused";
  if (
    /dns error|failed to lookup|name or service not known|no such host|ENOTFOUND|nodename/i.test(
      text,
    )
  ) {
    return "the host name could not be resolved";
  }
  if (/connection reset|ECONNRESET/i.test(text)) return "connection reset";
  if (/error reading a body|unexpected eof|connection closed/i.test(text)) {
    return "the server closed the connection";
  }
  if (/certificate|tls|ssl/i.test(text)) return `TLS failure (${lastLine(text)})`;
  if (/timed out|ETIMEDOUT/i.test(text)) return "connection timed out";
  return lastLine(chain[chain.length - 1] ?? "unknown error");
}

function lastLine(text: string): string {
  // Deno prefixes "error sending request for url (...)": the URL is already in our message.
  return text.replace(/^error sending request for url \([^)]*\):\s*/i, "").trim() ||
    "unknown error";
}

/** An error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
