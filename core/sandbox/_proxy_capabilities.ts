// The host's capabilities of a sandboxed plugin, one per descriptor its process sent: each kind
// is built by the proxy of its concept; a provider's presets are data, and its dialect, when it
// has one, runs in the plugin process behind the dialect proxy.

import type { Capability } from "../capability.ts";
import type { DialectFactory } from "../provider.ts";
import { proxyAllowance, proxyWallet } from "./_proxy_accounts.ts";
import { proxyCommand } from "./_proxy_commands.ts";
import { type CompactionDesk, proxyCompactor } from "./_proxy_compactor.ts";
import { proxyAction, proxyGate, proxyGuard, proxyHook, proxyStateKey } from "./_proxy_hooks.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import type { RenderBoard } from "./_proxy_renders.ts";
import { proxyTools } from "./_proxy_tools.ts";
import type { CapabilityDescriptor } from "./protocol.ts";

/** Builds the dialect of `flavor` that runs in the plugin process. */
export type DialectProxy = (flavor: string) => DialectFactory;

/**
 * The capabilities for `descriptors`. A descriptor of a kind this host does not know is a
 * `TypeError` naming it, which fails the activation, as a plugin's own bad capability does.
 */
export function proxyCapabilities(
  descriptors: readonly CapabilityDescriptor[],
  link: ProxyLink,
  board: RenderBoard,
  dialect: DialectProxy,
  desk: CompactionDesk,
  grantedEnv: readonly string[] = [],
): Capability[] {
  // The providers whose key its wallets and allowances may be given: its own presets.
  const own = new Set(
    descriptors.flatMap((d) => d.kind === "provider" ? d.presets.map((preset) => preset.name) : []),
  );
  const ownsProvider = (provider: string) => own.has(provider);
  return descriptors.map((descriptor): Capability => {
    switch (descriptor.kind) {
      case "tool":
        return proxyTools(descriptor, link);
      case "prompt":
        return board.prompt(descriptor);
      case "status":
        return board.status(descriptor, link);
      case "panel":
        return board.panel(descriptor, link);
      case "command":
        return proxyCommand(descriptor, link);
      case "provider": {
        const { name, flavor, presets } = descriptor;
        // A preset names the variable its key is read from, and amber hands that key to the
        // plugin's dialect: only a variable the user granted the plugin (`permissions.env`), or
        // any plugin could name OPENAI_API_KEY and be handed another provider's key.
        for (const preset of presets) {
          if (preset.keyEnv !== undefined && !grantedEnv.includes(preset.keyEnv)) {
            throw new TypeError(
              `preset '${preset.name}' of plugin '${link.pluginId}' reads its key from ` +
                `${preset.keyEnv}, which the plugin was not granted (permissions.env)`,
            );
          }
        }
        return descriptor.dialect
          ? { kind: "provider", name, flavor, presets, dialect: dialect(flavor) }
          : { kind: "provider", name, flavor, presets };
      }
      case "wallet":
        return proxyWallet(descriptor, link, ownsProvider);
      case "allowance":
        return proxyAllowance(descriptor, link, ownsProvider);
      case "hook":
        return proxyHook(descriptor, link);
      case "gate":
        return proxyGate(descriptor, link);
      case "guard":
        return proxyGuard(descriptor, link);
      case "compactor":
        return proxyCompactor(descriptor, link, desk);
      case "action":
        return proxyAction(descriptor, link);
      case "state":
        return proxyStateKey(descriptor);
      default: {
        const kind = (descriptor as { kind?: unknown }).kind;
        throw new TypeError(
          `plugin '${link.pluginId}' sent a capability of unknown kind ${JSON.stringify(kind)}`,
        );
      }
    }
  });
}
