// Where the test servers are, and how a test starts one or names one in a config entry.

import { join } from "node:path";

/** The test servers, by file name without `.ts`. */
export type TestServerName = "basic" | "crash" | "hang" | "garbage" | "list_changed" | "slow";

/** The folder holding the test servers. */
export const TEST_SERVERS_DIR: string = import.meta.dirname!;

/** The `deno` arguments that start test server `name` with its options (`--at=call`, ...). */
export function testServerArgs(name: TestServerName, options: readonly string[] = []): string[] {
  return ["run", "-A", join(TEST_SERVERS_DIR, `${name}.ts`), ...options];
}

/**
 * A stdio entry for `config.yaml`'s `mcp.servers` or a `.mcp.json`: this Deno runs the server.
 * Deno finds the repository's deno.json from the server's path, so any working directory will do.
 */
export function testServerEntry(
  name: TestServerName,
  options: readonly string[] = [],
): { command: string; args: string[] } {
  return { command: Deno.execPath(), args: testServerArgs(name, options) };
}
