/**
 * `@amber/cli`: the `amber` command as a library: {@linkcode main} runs it in-process and
 * {@linkcode openHost} builds the headless host it runs against. The agent session every front
 * end drives is `@amber/cli/session`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@amber/cli";
 * const out: string[] = [];
 * await main(["--version"], { out: (t) => out.push(t), err: () => {} });
 * assert.equal(out.length, 1);
 * ```
 *
 * @module
 */

export { type CommandEntry, COMMANDS, main, type MainOptions } from "./app.ts";
export type { CliCommand, CommandContext, HostExtras, Io } from "./command.ts";
export { checkConfig, type ConfigCheck } from "./config_check.ts";
export {
  ConfigFileError,
  type ConfigRead,
  loadConfigFile,
  type LoadConfigOptions,
  readConfigFile,
} from "./config_file.ts";
export { type Host, type HostMcpOptions, type HostOptions, openHost } from "./host.ts";
export { AgentCatalog, type AgentListing } from "./files/agent_catalog.ts";
export type { AwaitingServer } from "./mcp_sources.ts";
export { HostProcesses, type HostProcessesOptions } from "./host_processes.ts";
export type { FrontEndContributions } from "./core_contributions.ts";
export {
  accountSettings,
  type EnvReader,
  MissingKeyError,
  type ProviderHost,
  type ProviderOverrides,
  requireKey,
  type ResolvedProvider,
  resolveProvider,
  UnknownProviderError,
} from "./provider_settings.ts";
export { VERSION } from "./version.ts";
