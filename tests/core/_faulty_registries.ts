// Registries that misbehave on purpose, for tests of the runtime's safety net: for the
// capabilities named, an install that throws (after installing, when leaky) or a contribution
// whose remove throws (after removing, when `first`). Everything else passes through.

import type {
  Capability,
  Contribution,
  InstallResult,
  OwnedRegistry,
  PluginServices,
  Registries,
} from "@amber/core";
import { createRegistries } from "@amber/registries";
import { namedDialect } from "../_helpers.ts";

// What goes wrong with one capability, looked up by its name by the faulty registries.
export type Fault =
  // The registry's install throws; `leaky` installs the entry first, so a handle never comes back.
  | { readonly install: "throws"; readonly leaky: boolean }
  // The contribution's remove throws; `first` removes the entry before it throws.
  | { readonly remove: "throws"; readonly first: boolean };

// Registries that misbehave for the capabilities named in `faults`, and otherwise pass through.
export function faultyRegistries(faults: ReadonlyMap<string, Fault>): Registries {
  const real = createRegistries({ coreFlavors: { openai: () => namedDialect("openai") } });
  const wrapped: Record<string, unknown> = {};
  for (const [kind, registry] of Object.entries(real)) {
    const install = (owner: string, capability: Capability, services: PluginServices) => {
      const fault = faults.get(capability.name);
      const target = registry as OwnedRegistry<Capability>;
      if (fault !== undefined && "install" in fault) {
        if (fault.leaky) target.install(owner, capability, services);
        throw new Error(`install of '${capability.name}' broke`);
      }
      const result: InstallResult = target.install(owner, capability, services);
      if (result.status !== "installed" || fault === undefined) return result;
      const inner = result.contribution;
      const contribution: Contribution = {
        kind: inner.kind,
        name: inner.name,
        ids: inner.ids,
        remove: () => {
          if (fault.first) inner.remove();
          throw new Error(`remove of '${capability.name}' broke`);
        },
      };
      return { status: "installed", contribution } satisfies InstallResult;
    };
    wrapped[kind] = new Proxy(registry, {
      get: (target, property) => {
        if (property === "install") return install;
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }
  return wrapped as unknown as Registries;
}
