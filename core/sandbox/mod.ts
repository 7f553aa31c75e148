/**
 * `@amber/core/sandbox`: third-party plugins in a process of their own. The protocol
 * (newline-delimited JSON-RPC 2.0 over stdio, {@linkcode PROTOCOL_VERSION}), the peer both ends
 * speak, the permissions a plugin's manifest asks for and how a grant becomes Deno's flags, the
 * plugin process, the host's stand-in `Plugin` for it, and the plugin process's side.
 *
 * @module
 */

export * from "./json_rpc.ts";
export * from "./protocol.ts";
export * from "./connection.ts";
export * from "./permissions.ts";
export * from "./process.ts";
export {
  type AmberPackages,
  type NpmResolution,
  type PluginProcessCommand,
  pluginProcessCommand,
  PluginProcessError,
  type SpawnedPluginProcess,
  type SpawnPluginOptions,
} from "./process_command.ts";
export * from "./child.ts";
export * from "./sandboxed_plugin.ts";
export { SandboxedDialectError } from "./_dialect_answers.ts";
export { SandboxedCompactionError } from "./_compaction_answers.ts";
