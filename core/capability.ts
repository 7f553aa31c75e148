/**
 * Capabilities: the closed union of everything a plugin can declare, one member per kind.
 *
 * @module
 */

import type { AllowanceCapability } from "./allowance.ts";
import type { CommandCapability } from "./command.ts";
import type { CompactorCapability } from "./compaction.ts";
import type {
  ActionCapability,
  GateCapability,
  GuardCapability,
  HookCapability,
  StateKeyCapability,
} from "./hooks.ts";
import type { PanelCapability } from "./panel.ts";
import type { PromptBlockCapability } from "./prompt.ts";
import type { ProviderCapability } from "./provider.ts";
import type { StatusSegmentCapability } from "./status.ts";
import type { ToolCapability } from "./tool_capability.ts";
import type { WalletCapability } from "./wallet.ts";

/**
 * One thing a plugin contributes. A closed union: the runtime installs each kind into its own
 * registry, so a plugin cannot add anything the harness does not know how to remove.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Capability } from "@amber/core";
 * const capabilities: Capability[] = [
 *   { kind: "prompt", name: "style", priority: 400, render: () => "Answer briefly." },
 * ];
 * assert.deepEqual(capabilities.map((c) => c.kind), ["prompt"]);
 * ```
 */
export type Capability =
  | ToolCapability
  | PromptBlockCapability
  | StatusSegmentCapability
  | PanelCapability
  | CommandCapability
  | ProviderCapability
  | WalletCapability
  | AllowanceCapability
  | HookCapability
  | GateCapability
  | GuardCapability
  | CompactorCapability
  | ActionCapability
  | StateKeyCapability;
