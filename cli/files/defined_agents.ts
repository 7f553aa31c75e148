/**
 * The defined agents a host's sub-agent service lists: those of the host's agent catalog whose
 * plugin is active now. An agent left out because another file defines its name first is
 * reported once, as a diagnostic of the plugin that loaded it.
 *
 * @module
 */

import type { AgentDefinition, PluginRuntime, SubagentService } from "@amber/core";
import type { AgentCatalog, AgentListing } from "./agent_catalog.ts";

/** What the agents are read from: a host's catalog and runtime. */
export interface AgentHost {
  /** The agents the markdown files define, by plugin. */
  readonly agents: AgentCatalog;
  /** Which plugins are on, and where a diagnostic goes. */
  readonly runtime: PluginRuntime;
}

const NONE: readonly AgentDefinition[] = Object.freeze([]);

/**
 * The defined agents of one host.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { AgentCatalog } from "./agent_catalog.ts";
 * import { DefinedAgents } from "./defined_agents.ts";
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * const catalog = new AgentCatalog();
 * catalog.set("files.agents", [{ name: "a", description: "d", systemPrompt: "p" }]);
 * // No plugin named so is active: its agents are not listed.
 * assert.deepEqual(new DefinedAgents(() => ({ agents: catalog, runtime })).list(), []);
 * ```
 */
export class DefinedAgents {
  readonly #host: () => AgentHost | undefined;
  #reported: AgentListing | undefined;

  /**
   * The agents of the catalog of the host `host` gives (none before there is one), as its
   * runtime has their plugins on or off.
   */
  constructor(host: () => AgentHost | undefined) {
    this.#host = host;
  }

  /** The agents now: the same array for as long as they do not change. */
  list(): readonly AgentDefinition[] {
    const host = this.#host();
    if (host === undefined) return NONE;
    const { agents, runtime } = host;
    const listing = agents.list((id) => isActive(runtime, id));
    if (listing !== this.#reported) {
      this.#reported = listing;
      for (const { pluginId, message } of listing.shadowed) {
        runtime.report({ pluginId, where: "agents", message });
      }
    }
    return listing.agents;
  }
}

// A plugin the runtime does not know (no host registers an agents plugin it does not run) is off.
function isActive(runtime: PluginRuntime, id: string): boolean {
  try {
    return runtime.state(id).status === "active";
  } catch {
    return false;
  }
}

/**
 * `service` with `agents` listing the defined agents of the host `host` gives (none before there
 * is one); `run` is the service's own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withDefinedAgents } from "./defined_agents.ts";
 * const run = (prompt: string) => Promise.resolve(`done: ${prompt}`);
 * const service = withDefinedAgents({ run }, () => undefined);
 * assert.equal(await service.run("look", { signal: new AbortController().signal }), "done: look");
 * assert.deepEqual(service.agents?.(), []);
 * ```
 */
export function withDefinedAgents(
  service: SubagentService,
  host: () => AgentHost | undefined,
): SubagentService {
  const agents = new DefinedAgents(host);
  return { run: (prompt, options) => service.run(prompt, options), agents: () => agents.list() };
}
