/**
 * The agents of one host: what each agents plugin (`files.agents`, `files.agents-claude`) loaded
 * last, by plugin. A listing holds only the agents of plugins the runtime has active, so a plugin
 * switched off takes its agents with it at once, with nothing to call on the way out. Two
 * plugins defining one name: the plugin whose id sorts first wins (`files.agents`, amber's own
 * folders, before `files.agents-claude`), and the listing says which file was left out.
 *
 * @module
 */

import type { AgentDefinition } from "@amber/core";

/** A listing of the catalog: the agents, and the files left out for a name taken before. */
export interface AgentListing {
  /** The agents, each name once; the same array for as long as nothing changed. */
  readonly agents: readonly AgentDefinition[];
  /** Each agent left out: its plugin, and a line naming it, its file and the file that won. */
  readonly shadowed: readonly { readonly pluginId: string; readonly message: string }[];
}

const EMPTY: AgentListing = Object.freeze({
  agents: Object.freeze([]),
  shadowed: Object.freeze([]),
});

/**
 * The agents plugins have loaded, by plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentCatalog } from "./agent_catalog.ts";
 * const catalog = new AgentCatalog();
 * const agent = (name: string, path: string) => ({ name, description: "d", systemPrompt: "p", path });
 * catalog.set("files.agents-claude", [agent("review", ".claude/agents/review.md")]);
 * catalog.set("files.agents", [agent("review", ".amber/agents/review.md")]);
 * const all = catalog.list(() => true);
 * assert.deepEqual(all.agents.map((a) => a.path), [".amber/agents/review.md"]);
 * assert.equal(all.shadowed.length, 1);
 * assert.equal(catalog.list(() => true), all);
 * assert.deepEqual(catalog.list((id) => id !== "files.agents").agents.map((a) => a.path), [
 *   ".claude/agents/review.md",
 * ]);
 * ```
 */
export class AgentCatalog {
  readonly #byPlugin = new Map<string, readonly AgentDefinition[]>();
  #version = 0;
  #cached: { readonly key: string; readonly listing: AgentListing } | undefined;

  /** Records what plugin `pluginId` loaded, in place of what it had before. */
  set(pluginId: string, agents: readonly AgentDefinition[]): void {
    if (this.#byPlugin.get(pluginId) === agents) return;
    this.#byPlugin.set(pluginId, agents);
    this.#version++;
  }

  /**
   * The agents of the plugins `active` says are on, each name once. The same object comes back
   * for as long as neither the agents nor which plugins are active changed.
   */
  list(active: (pluginId: string) => boolean): AgentListing {
    if (this.#byPlugin.size === 0) return EMPTY;
    const ids = [...this.#byPlugin.keys()].filter(active).sort();
    const key = `${this.#version}:${ids.join(",")}`;
    if (this.#cached?.key === key) return this.#cached.listing;
    const listing = ids.length === 0 ? EMPTY : this.#listing(ids);
    this.#cached = { key, listing };
    return listing;
  }

  #listing(ids: readonly string[]): AgentListing {
    const agents: AgentDefinition[] = [];
    const shadowed: { pluginId: string; message: string }[] = [];
    const taken = new Map<string, AgentDefinition>();
    for (const id of ids) {
      for (const agent of this.#byPlugin.get(id)!) {
        const first = taken.get(agent.name);
        if (first === undefined) {
          taken.set(agent.name, agent);
          agents.push(agent);
        } else {
          shadowed.push({
            pluginId: id,
            message: `the agent '${agent.name}' of ${agent.path ?? id} is left out: ` +
              `${first.path ?? "another file"} defines it first`,
          });
        }
      }
    }
    return Object.freeze({ agents: Object.freeze(agents), shadowed: Object.freeze(shadowed) });
  }
}
