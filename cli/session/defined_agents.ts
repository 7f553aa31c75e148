/**
 * The defined agents a session's sub-agent service lists: those of the host's agent catalog
 * whose plugin is active now. An agent left out because another file defines its name first is
 * reported once, as a diagnostic of the plugin that loaded it.
 *
 * @module
 */

import type { AgentDefinition, PluginRuntime } from "@amber/core";
import type { AgentCatalog, AgentListing } from "../files/agent_catalog.ts";

/**
 * The defined agents of one session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { AgentCatalog } from "../files/agent_catalog.ts";
 * import { DefinedAgents } from "./defined_agents.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const catalog = new AgentCatalog();
 * catalog.set("files.agents", [{ name: "a", description: "d", systemPrompt: "p" }]);
 * // No plugin named so is active: its agents are not listed.
 * assert.deepEqual(new DefinedAgents({ agents: catalog, runtime }).list(), []);
 * ```
 */
export class DefinedAgents {
  readonly #host: { readonly agents: AgentCatalog; readonly runtime: PluginRuntime };
  #reported: AgentListing | undefined;

  /** The agents of `host`'s catalog, as its runtime has their plugins on or off. */
  constructor(host: { readonly agents: AgentCatalog; readonly runtime: PluginRuntime }) {
    this.#host = host;
  }

  /** The agents now: the same array for as long as they do not change. */
  list(): readonly AgentDefinition[] {
    const { agents, runtime } = this.#host;
    const listing = agents.list((id) => runtime.state(id).status === "active");
    if (listing !== this.#reported) {
      this.#reported = listing;
      for (const { pluginId, message } of listing.shadowed) {
        runtime.report({ pluginId, where: "agents", message });
      }
    }
    return listing.agents;
  }
}
