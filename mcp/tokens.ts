/**
 * The OAuth state amber keeps for a remote server, as the package's entry offers it: the OAuth
 * client (`oauth.ts`) loads the SDK, which a command that only forgets a server's tokens
 * (`amber mcp remove`) need not pay for until it does.
 *
 * @module
 */

/**
 * Deletes what is stored about the authorization of the server `server` in `configDir` (its
 * tokens, its registered client), so that the next connection authorizes again. Nothing happens
 * when nothing is stored; a name that could not be a server's is refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forgetMcpTokens } from "./tokens.ts";
 * const config = await Deno.makeTempDir();
 * await Deno.mkdir(`${config}/mcp/oauth`, { recursive: true });
 * await Deno.writeTextFile(`${config}/mcp/oauth/docs.json`, "{}");
 * await forgetMcpTokens(config, "docs");
 * await assert.rejects(Deno.stat(`${config}/mcp/oauth/docs.json`), Deno.errors.NotFound);
 * await forgetMcpTokens(config, "docs");
 * await Deno.remove(config, { recursive: true });
 * ```
 */
export async function forgetMcpTokens(configDir: string, server: string): Promise<void> {
  const oauth = await import("./oauth.ts");
  await oauth.forgetMcpTokens(configDir, server);
}
