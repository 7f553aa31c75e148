/**
 * The harness configuration and where it lives on disk.
 *
 * @module
 */

import { join } from "node:path";
import type { ModelOverride } from "./model_info.ts";

/** The approval policy for tools that need approval. */
export type ApprovalPolicy = "ask" | "auto" | "deny";

/**
 * The harness configuration, as `config.yaml` holds it. Keys are never here: only the name of
 * the environment variable that holds one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { AmberConfig } from "@amber/core";
 * const config: AmberConfig = {
 *   provider: "openai",
 *   model: "gpt-5",
 *   apiKeyEnv: "OPENAI_API_KEY",
 *   plugins: { hello: { greeting: "Hi" } },
 * };
 * assert.deepEqual(config.plugins.hello, { greeting: "Hi" });
 * ```
 */
export interface AmberConfig {
  /** The preset in use. */
  readonly provider?: string;
  /** The model in use. */
  readonly model?: string;
  /** Overrides the preset's base URL. */
  readonly baseUrl?: string;
  /** The environment variable that holds the key. */
  readonly apiKeyEnv?: string;
  /** The reasoning effort asked of the model ("low", "medium", "high"), where it has one. */
  readonly reasoningEffort?: string;
  /** The approval policy. */
  readonly approval?: ApprovalPolicy;
  /** One section per plugin id. */
  readonly plugins: { readonly [pluginId: string]: unknown };
  /** Deadlines for plugin code, per seam and per plugin. */
  readonly timeouts?: TimeoutConfig;
  /** When a plugin that keeps faulting is switched off for the session. */
  readonly quarantine?: QuarantineConfig;
  /** What of the host's secrets reaches commands the agent runs. */
  readonly secrets?: SecretsConfig;
  /** The MCP servers amber starts as plugins, and how it treats them. */
  readonly mcp?: McpConfig;
  /**
   * What amber knows of models beyond its catalog (a local model's window, a negotiated
   * price), by model id; prices in dollars per million tokens.
   */
  readonly models?: { readonly [model: string]: ModelOverride };
  /** When and how the conversation is compacted. */
  readonly compaction?: CompactionConfig;
  /** The user's permission rules: calls allowed, asked about or denied by tool and argument. */
  readonly permissions?: PermissionsConfig;
  /** Which other agents' files amber reads too. */
  readonly compat?: CompatConfig;
}

/**
 * The `compat` section of `config.yaml`: whether amber reads other agents' files as its own.
 */
export interface CompatConfig {
  /**
   * Claude Code's: the workspace's and the user's `.claude/{commands,skills,agents}/` and the
   * workspace's `CLAUDE.md`. True unless set to false.
   */
  readonly claude?: boolean;
}

/**
 * The `permissions` section of `config.yaml` or of a workspace's `.amber/permissions.yaml`: rules
 * such as `bash(npm test *)` or `write(src/**)` (see `parsePermissionRule`).
 */
export interface PermissionsConfig {
  /** Rules whose calls run without the approval question. */
  readonly allow?: readonly string[];
  /** Rules whose calls are put to the user, even under `--approve auto`. */
  readonly ask?: readonly string[];
  /** Rules whose calls are blocked. */
  readonly deny?: readonly string[];
}

/** The `compaction` section of `config.yaml`. */
export interface CompactionConfig {
  /**
   * The share of the model's context window a request may fill before the conversation is
   * compacted, above 0 and at most 1; 0.85 by default. `amber run --compact-at` overrides it.
   */
  readonly at?: number;
  /** The user turns kept verbatim; 2 by default. */
  readonly keepTurns?: number;
  /** False turns automatic compaction off (an overflow still compacts). */
  readonly auto?: boolean;
}

/** A place where the host waits for plugin code. */
export type Seam =
  | "tool"
  | "toolGrace"
  | "hook"
  | "gate"
  | "guard"
  | "compactor"
  | "action"
  | "command"
  | "wallet"
  | "import"
  | "initialize";

/** Milliseconds per seam; each may be left out. */
export type SeamTimeouts = { readonly [S in Seam]?: number };

/** The `timeouts` section of `config.yaml`. */
export interface TimeoutConfig extends SeamTimeouts {
  /** Per plugin id, overrides of the seams above. */
  readonly plugins?: { readonly [pluginId: string]: SeamTimeouts };
}

/** The `quarantine` section of `config.yaml`. */
export interface QuarantineConfig {
  /** Faults within the window that switch a plugin off for the session. */
  readonly faults?: number;
  /** The window, in seconds. */
  readonly windowSeconds?: number;
}

/** The `secrets` section of `config.yaml`. */
export interface SecretsConfig {
  /**
   * Environment variables passed to bash and background jobs although their names look like
   * secrets (`GITHUB_TOKEN`, say); the key amber itself uses is never passed.
   */
  readonly passEnv?: readonly string[];
}

/**
 * The `mcp` section of `config.yaml`. The entries are checked and read by `@amber/mcp`, which the
 * host loads only when a server is configured, so the core knows only their place.
 */
export interface McpConfig {
  /** The servers by name, each entry as the file holds it (entries with problems left out). */
  readonly servers?: { readonly [name: string]: unknown };
  /**
   * Whether tools a server marks `readOnlyHint` run without asking (an entry's own
   * `trustReadOnly` overrides it); false by default.
   */
  readonly trustReadOnly?: boolean;
  /** How long `amber run` waits for the servers to connect before its first request (seconds; 5). */
  readonly startupWait?: number;
}

/**
 * The config directory: `$AMBER_CONFIG_DIR`, else `$XDG_CONFIG_HOME/amber`, else
 * `~/.config/amber`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configDir } from "@amber/core";
 * const dir = configDir({ AMBER_CONFIG_DIR: "/tmp/amber" });
 * assert.equal(dir, "/tmp/amber");
 * ```
 */
export function configDir(env: { readonly [name: string]: string | undefined }): string {
  if (env.AMBER_CONFIG_DIR) return env.AMBER_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "amber");
  const home = env.HOME ?? env.USERPROFILE;
  if (!home) {
    throw new Error("cannot find a config directory: set AMBER_CONFIG_DIR or HOME");
  }
  return join(home, ".config", "amber");
}
