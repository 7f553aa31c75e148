// Tool-call arguments travel as JSON text in amber; Anthropic (`tool_use.input`) and Gemini
// (`functionCall.args`) take them back as an object.

/**
 * The arguments as a JSON object; anything else (invalid JSON, an array, nothing) replays as
 * `{}`, since the API takes nothing else and the tool result that follows already says what
 * went wrong.
 */
export function argumentsObject(text: string): Record<string, unknown> {
  if (text.length === 0) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Replayed as {}, as said above.
  }
  return {};
}
