// The sandboxed way of `@amber/core/testing`: a plugin module started in a plugin process of its
// own, as amber starts a third-party plugin, with what the test host needs around it. Loaded only
// when a test asks for it, so an in-process test host never loads the sandbox.

import { fileURLToPath } from "node:url";
import type { Plugin, PluginPermissions } from "./plugin.ts";
import type { PluginRuntime } from "./runtime.ts";
import type { PluginConnection } from "./sandbox/connection.ts";
import { spawnPluginProcess } from "./sandbox/process.ts";
import type { SpawnPluginOptions } from "./sandbox/process_command.ts";
import { type DescribeParams, Method, PROTOCOL_VERSION } from "./sandbox/protocol.ts";
import { loadSandboxedPlugin, type SandboxedPlugin } from "./sandbox/sandboxed_plugin.ts";

/** What of `TestPluginModuleOptions` (testing.ts) starting the process reads. */
export interface SandboxedStartOptions {
  /** The workspace root; the current directory by default. */
  readonly workspace?: string;
  /** The host version sent with `describe`. */
  readonly hostVersion?: string;
  /** What the process may touch; the plugin's own permissions by default. */
  readonly grant?: PluginPermissions;
  /** The folder `data:` paths mean; a temporary one by default. */
  readonly dataDir?: string;
  /** Folders the process may read to import the module; the module's folder by default. */
  readonly readFolders?: readonly string[];
  /** The deadline of the import and `describe`, in ms; 30 s by default. */
  readonly importTimeoutMs?: number;
  /** Receives each line the process logs. */
  readonly onLog?: (line: string) => void;
}

/** A plugin module running in a plugin process, as the test host holds it. */
export interface SandboxedForTest {
  /** The host's stand-in for the plugin. */
  readonly plugin: Plugin;
  /** The id of the plugin process while one runs. */
  pid(): number | undefined;
  /** Resolves once the process has answered everything sent before; never rejects. */
  settle(): Promise<void>;
  /** Takes the runtime the plugin is registered in: a process that dies fails it there. */
  started(runtime: PluginRuntime): void;
  /** Ends the process, if one runs, and removes the data folder it made. */
  closed(): Promise<void>;
}

/**
 * Starts the module's plugin process and has it describe the plugin. Without `options.grant`
 * the plugin gets the permissions it asks for: they are only known once a process has described
 * it, so, as `amber plugins add` does, it is first described with nothing granted, then started
 * again with its own permissions when it asks for any. Rejects with the sandbox's error (it
 * leaves no process and no data folder behind).
 */
export async function startSandboxed(
  specifier: string,
  options: SandboxedStartOptions,
): Promise<SandboxedForTest> {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? await Deno.makeTempDir({ prefix: "amber-test-data-" });
  const removeDataDir = async (): Promise<void> => {
    if (ownDataDir) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  };
  const hostVersion = options.hostVersion ?? "0.0.0-test";
  const importTimeoutMs = options.importTimeoutMs ?? 30_000;
  let runtime: PluginRuntime | undefined;
  // The current process's connection, kept to settle on (switching the plugin back on starts a
  // new process).
  let connection: PluginConnection | undefined;
  const load = (grant: PluginPermissions): Promise<SandboxedPlugin> => {
    const spawn: SpawnPluginOptions = {
      specifier,
      // What messages call it until its process has described it.
      pluginId: specifier,
      grant,
      workspace: options.workspace ?? Deno.cwd(),
      dataDir,
      readFolders: options.readFolders ?? moduleFolders(specifier),
      ...(options.onLog ? { onLog: options.onLog } : {}),
    };
    return loadSandboxedPlugin({
      ...spawn,
      connect: () => connection = spawnPluginProcess(spawn),
      hostVersion,
      importTimeoutMs,
      onFault: ({ pluginId, where, message }) => runtime?.fail(pluginId, where, message),
    });
  };
  let sandboxed: SandboxedPlugin;
  try {
    sandboxed = await load(options.grant ?? {});
    const asked = sandboxed.manifest.permissions;
    if (options.grant === undefined && asked !== undefined && asksAnything(asked)) {
      await sandboxed.close();
      sandboxed = await load(asked);
    }
  } catch (error) {
    await removeDataDir();
    throw error;
  }
  const loaded = sandboxed;
  return {
    plugin: loaded.plugin,
    pid: () => loaded.pid,
    // The process handles messages in order and pushes the renders a message changed before it
    // answers the next request; so once a harmless request (`describe` again) is answered,
    // every render the messages before it caused is in.
    async settle(): Promise<void> {
      const current = connection;
      if (current === undefined || !current.peer.open) return;
      const params: DescribeParams = { protocolVersion: PROTOCOL_VERSION, hostVersion };
      await current.call(Method.describe, params, {
        deadlineMs: importTimeoutMs,
        what: `plugin '${loaded.manifest.id}': settle`,
      }).catch(() => {});
    },
    started(started: PluginRuntime): void {
      runtime = started;
    },
    async closed(): Promise<void> {
      try {
        await loaded.close();
      } finally {
        await removeDataDir();
      }
    },
  };
}

// The folder of a file module, which its plugin process must read to import it.
function moduleFolders(specifier: string): string[] {
  if (!specifier.startsWith("file:")) return [];
  const url = new URL(specifier);
  url.search = "";
  url.hash = "";
  return [fileURLToPath(new URL(".", url))];
}

function asksAnything(permissions: PluginPermissions): boolean {
  return Object.values(permissions).some((list) => Array.isArray(list) && list.length > 0);
}
