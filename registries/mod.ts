/**
 * `@amber/registries`: one registry per capability kind, each also importable on its own
 * (`@amber/registries/tools`, `/prompts`, `/status`, `/panels`, `/commands`, `/providers`,
 * `/wallets`, `/allowances`, and `/extensions` for the kernel's six), and
 * {@linkcode createRegistries} to build all fourteen at once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRegistries } from "@amber/registries";
 * const registries = createRegistries();
 * assert.equal(registries.tool.list().length, 0);
 * ```
 *
 * @module
 */

import type { DialectFactory, Registries } from "@amber/core";
import { createAllowanceRegistry } from "./allowances.ts";
import { type CoreCommandRoots, createCommandRegistry } from "./commands.ts";
import {
  createActionRegistry,
  createCompactorRegistry,
  createGateRegistry,
  createGuardRegistry,
  createHookRegistry,
  createStateKeyRegistry,
} from "./extensions.ts";
import { createPanelRegistry } from "./panels.ts";
import { createPromptRegistry } from "./prompts.ts";
import { createProviderRegistry } from "./providers.ts";
import { createStatusRegistry } from "./status.ts";
import { createToolRegistry } from "./tools.ts";
import { createWalletRegistry } from "./wallets.ts";

export * from "./allowances.ts";
export * from "./commands.ts";
export * from "./extensions.ts";
export * from "./panels.ts";
export * from "./prompts.ts";
export * from "./providers.ts";
export * from "./status.ts";
export * from "./tools.ts";
export * from "./wallets.ts";

/** Options of {@linkcode createRegistries}. */
export interface RegistriesOptions {
  /** The command roots the host owns (`help`, `set`, ...). */
  readonly coreCommands?: CoreCommandRoots;
  /** The flavors the host owns (the shared `openai`). */
  readonly coreFlavors?: { readonly [flavor: string]: DialectFactory };
  /** Receives render failures of prompt blocks and status segments, once each. */
  readonly onRenderError?: (owner: string, name: string, error: unknown) => void;
  /** Receives what a plugin's command handler threw, with its command line (`/root sub`). */
  readonly onCommandError?: (owner: string, line: string, error: unknown) => void;
}

/**
 * Builds the fourteen registries: the eight harness kinds, then the kernel's six.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRegistries } from "@amber/registries";
 * const registries = createRegistries({
 *   onRenderError: (owner, name) => console.error(owner, name),
 * });
 * assert.equal(Object.keys(registries).length, 14);
 * ```
 */
export function createRegistries(options: RegistriesOptions = {}): Registries {
  const onError = options.onRenderError;
  return {
    tool: createToolRegistry(),
    prompt: createPromptRegistry({ onError }),
    status: createStatusRegistry({ onError }),
    panel: createPanelRegistry(),
    command: createCommandRegistry({
      coreRoots: options.coreCommands,
      onHandlerError: options.onCommandError,
    }),
    provider: createProviderRegistry({ coreFlavors: options.coreFlavors }),
    wallet: createWalletRegistry(),
    allowance: createAllowanceRegistry(),
    hook: createHookRegistry(),
    gate: createGateRegistry(),
    guard: createGuardRegistry(),
    compactor: createCompactorRegistry(),
    action: createActionRegistry(),
    state: createStateKeyRegistry(),
  };
}
