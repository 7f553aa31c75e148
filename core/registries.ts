/**
 * The registries port: the fourteen registries a runtime installs into, one per capability
 * kind. `@amber/registries` implements it; the runtime and the kernel only see this shape.
 *
 * @module
 */

import type { AllowanceRegistry } from "./allowance.ts";
import type { CommandRegistry } from "./command.ts";
import type { CompactorCapability } from "./compaction.ts";
import type {
  ActionCapability,
  GateCapability,
  GuardCapability,
  HookCapability,
  StateKeyCapability,
} from "./hooks.ts";
import type { PanelRegistry } from "./panel.ts";
import type { PromptRegistry } from "./prompt.ts";
import type { ProviderRegistry } from "./provider.ts";
import type { NamedRegistry } from "./registry.ts";
import type { StatusRegistry } from "./status.ts";
import type { ToolRegistry } from "./tool_capability.ts";
import type { WalletRegistry } from "./wallet.ts";

/**
 * The fourteen registries, keyed by the capability kind each installs: the eight harness kinds,
 * then the kernel's six.
 */
export interface Registries {
  /** Tools. */
  readonly tool: ToolRegistry;
  /** Prompt blocks. */
  readonly prompt: PromptRegistry;
  /** Status segments. */
  readonly status: StatusRegistry;
  /** Panels. */
  readonly panel: PanelRegistry;
  /** Commands. */
  readonly command: CommandRegistry;
  /** Providers. */
  readonly provider: ProviderRegistry;
  /** Wallets. */
  readonly wallet: WalletRegistry;
  /** Allowances. */
  readonly allowance: AllowanceRegistry;
  /** Phase hooks. */
  readonly hook: NamedRegistry<HookCapability>;
  /** Tool gates. */
  readonly gate: NamedRegistry<GateCapability>;
  /** Run-end guards. */
  readonly guard: NamedRegistry<GuardCapability>;
  /** Compaction strategies. */
  readonly compactor: NamedRegistry<CompactorCapability>;
  /** Action kinds. */
  readonly action: NamedRegistry<ActionCapability>;
  /** State keys. */
  readonly state: NamedRegistry<StateKeyCapability>;
}
