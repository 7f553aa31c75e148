/**
 * The panel registry: full-screen views plugins contribute. The host owns placement, framing,
 * scrolling and focus; a panel only produces lines and, while focused, may consume keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPanelRegistry } from "@amber/registries/panels";
 * import { EventBus } from "@amber/core";
 *
 * const panels = createPanelRegistry();
 * const services = {
 *   owner: "gemini",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * panels.install("gemini", {
 *   kind: "panel",
 *   name: "models",
 *   id: "gemini_models",
 *   title: "Gemini models",
 *   lines: (width) => ["gemini-2.5-pro".slice(0, width)],
 * }, services);
 * assert.deepEqual(panels.render("gemini_models", 6), ["gemini"]);
 * ```
 *
 * @module
 */

import {
  failed,
  installed,
  type InstallResult,
  type PanelCapability,
  type PanelEntry,
  type PanelRegistry,
  type PluginServices,
  type RegistryEntry,
} from "@amber/core";
import { errorMessage, OwnedMap, ownerLabel } from "./_owned.ts";

interface Panel {
  readonly capability: PanelCapability;
  readonly entry: PanelEntry;
}

/**
 * Creates an empty panel registry.
 *
 * Panel ids are unique across the harness; a duplicate names both plugins. Nothing a panel
 * throws escapes: `render` shows the failure as the panel's one line, `key` reports it as an
 * unused key. There is deliberately no global key hook: a key reaches only the panel it is
 * routed to.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPanelRegistry } from "@amber/registries/panels";
 * import { EventBus } from "@amber/core";
 *
 * const panels = createPanelRegistry();
 * const services = {
 *   owner: "p",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * panels.install("p", {
 *   kind: "panel",
 *   name: "broken",
 *   id: "broken",
 *   title: "Broken",
 *   lines: () => {
 *     throw new Error("no data");
 *   },
 *   onKey: (key) => key === "r",
 * }, services);
 * assert.deepEqual(panels.render("broken", 80), ["panel 'broken' failed: no data"]);
 * assert.equal(panels.key("broken", "r"), true);
 * assert.equal(panels.key("broken", "x"), false);
 * ```
 */
export function createPanelRegistry(): PanelRegistry {
  const panels = new OwnedMap<Panel>();
  let listed: readonly PanelEntry[] | undefined;
  let listedAt = -1;

  function install(
    owner: string,
    capability: PanelCapability,
    _services: PluginServices,
  ): InstallResult {
    const id: unknown = capability?.id;
    if (typeof id !== "string" || id === "") {
      return failed(
        `panel capability '${capability?.name}' of ${ownerLabel(owner)} has no panel id`,
      );
    }
    if (typeof capability.title !== "string") {
      return failed(`${panelLabel(id, owner)} has no title`);
    }
    if (typeof capability.lines !== "function") {
      return failed(`${panelLabel(id, owner)} has no lines function`);
    }
    if (capability.onKey !== undefined && typeof capability.onKey !== "function") {
      return failed(`${panelLabel(id, owner)} has an onKey that is not a function`);
    }
    const holder = panels.get(id);
    if (holder !== undefined) {
      return failed(
        `${panelLabel(id, owner)} collides with the panel of ${ownerLabel(holder.owner)}`,
        { id, owner: holder.owner },
      );
    }
    const entry: PanelEntry = { id, title: capability.title, owner };
    const handle = panels.install(id, owner, { capability, entry }, "panel", capability.name);
    if (handle === undefined) return failed(`${panelLabel(id, owner)} could not be added`);
    return installed(handle);
  }

  return {
    install,
    list(): readonly PanelEntry[] {
      if (listedAt !== panels.version || listed === undefined) {
        listedAt = panels.version;
        listed = Object.freeze(panels.records().map((record) => record.value.entry));
      }
      return listed;
    },
    render(id: string, width: number): readonly string[] | undefined {
      const panel = panels.get(id)?.value;
      if (panel === undefined) return undefined;
      let lines: unknown;
      try {
        lines = panel.capability.lines(width);
      } catch (error) {
        return [`panel '${id}' failed: ${errorMessage(error)}`];
      }
      if (!Array.isArray(lines)) {
        return [`panel '${id}' failed: lines() returned ${typeof lines}, not an array of lines`];
      }
      // A stray non-string would crash the host's line layout; stringify it instead.
      for (let i = 0; i < lines.length; i++) {
        if (typeof lines[i] !== "string") {
          return lines.map((line) => typeof line === "string" ? line : errorMessage(line));
        }
      }
      return lines as readonly string[];
    },
    key(id: string, key: string): boolean {
      const capability = panels.get(id)?.value.capability;
      if (capability?.onKey === undefined) return false;
      try {
        return capability.onKey(key) === true;
      } catch {
        // A panel failing on a key is contained: the key simply counts as unused.
        return false;
      }
    },
    entries(): readonly RegistryEntry[] {
      return panels.entries();
    },
    purge(owner: string): readonly string[] {
      return panels.purge(owner);
    },
    get version(): number {
      return panels.version;
    },
  };
}

function panelLabel(id: string, owner: string): string {
  return `panel '${id}' from ${ownerLabel(owner)}`;
}
