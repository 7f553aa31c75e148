/**
 * The prompt registry: system-text blocks plugins add to the prompt copy at every step, ordered
 * by (priority, registration), and the report of which block first broke the server's prefix
 * cache.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPromptRegistry } from "@amber/registries/prompts";
 * import { EventBus } from "@amber/core";
 *
 * const prompts = createPromptRegistry();
 * const services = {
 *   owner: "facts",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * prompts.install("facts", {
 *   kind: "prompt",
 *   name: "project_facts",
 *   priority: 400,
 *   render: () => "The project uses Deno.",
 * }, services);
 * const prompt = prompts.assemble([{ role: "user", content: "Hi" }]);
 * assert.equal(prompt.messages.length, 2);
 * assert.deepEqual(prompt.blocks, ["project_facts"]);
 * ```
 *
 * @module
 */

import {
  type AssembledPrompt,
  failed,
  installed,
  type InstallResult,
  type Message,
  type PluginServices,
  type PromptBlockCapability,
  type PromptRegistry,
  type RegistryEntry,
  type SealedContext,
} from "@amber/core";
import { errorMessage, OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

/** Options of {@link createPromptRegistry}. */
export interface PromptRegistryOptions {
  /**
   * Told when a block's `render` throws (or returns something other than a string). The block
   * is left out of that assembly; it is reported once, and again only after it has rendered
   * successfully in between, so a broken block does not flood the log at every step.
   */
  readonly onError?: (owner: string, name: string, error: unknown) => void;
}

interface Block {
  readonly capability: PromptBlockCapability;
  failing: boolean;
}

/**
 * Creates an empty prompt registry.
 *
 * `assemble` never touches the sealed context: it returns a new array holding the context's
 * leading system messages, then each non-empty block as `{role: "system", content, source}`,
 * then the rest of the context. `firstChanged` compares the blocks that contributed text with
 * the previous assembly, position by position; on the first assembly every block is new, so it
 * names the first one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPromptRegistry } from "@amber/registries/prompts";
 * import { EventBus } from "@amber/core";
 *
 * const errors: string[] = [];
 * const prompts = createPromptRegistry({
 *   onError: (owner, name) => errors.push(`${owner}/${name}`),
 * });
 * const services = {
 *   owner: "p",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * let turn = 0;
 * const block = (name: string, priority: number, render: () => string) =>
 *   ({ kind: "prompt", name, priority, render }) as const;
 * prompts.install("p", block("rules", 100, () => "Be terse."), services);
 * prompts.install("p", block("clock", 900, () => `turn ${turn}`), services);
 * prompts.assemble([]);
 * turn++;
 * assert.equal(prompts.assemble([]).firstChanged, "clock");
 * assert.equal(prompts.assemble([]).firstChanged, undefined);
 * assert.deepEqual(errors, []);
 * ```
 */
export function createPromptRegistry(options: PromptRegistryOptions = {}): PromptRegistry {
  const blocks = new OwnedMap<Block>();
  const onError = options.onError;
  let ordered: readonly OwnedRecord<Block>[] = [];
  let orderedAt = -1;
  // What the last assembly put in, position by position.
  let lastNames: readonly string[] = [];
  let lastTexts: readonly string[] = [];

  function order(): readonly OwnedRecord<Block>[] {
    if (orderedAt !== blocks.version) {
      orderedAt = blocks.version;
      ordered = [...blocks.records()].sort((a, b) =>
        a.value.capability.priority - b.value.capability.priority || a.seq - b.seq
      );
    }
    return ordered;
  }

  function report(record: OwnedRecord<Block>, error: unknown): void {
    if (record.value.failing) return;
    record.value.failing = true;
    if (onError === undefined) return;
    try {
      onError(record.owner, record.id, error);
    } catch {
      // The error sink is the host's; its failure must not break assembly.
    }
  }

  function install(
    owner: string,
    capability: PromptBlockCapability,
    _services: PluginServices,
  ): InstallResult {
    const name: unknown = capability?.name;
    if (typeof name !== "string" || name === "") {
      return failed(`prompt block from ${ownerLabel(owner)} has no name`);
    }
    if (typeof capability.priority !== "number" || !Number.isFinite(capability.priority)) {
      return failed(`${blockLabel(name, owner)} has no finite numeric priority`);
    }
    if (typeof capability.render !== "function") {
      return failed(`${blockLabel(name, owner)} has no render function`);
    }
    const holder = blocks.get(name);
    if (holder !== undefined) {
      return failed(
        `${blockLabel(name, owner)} collides with the block of ${ownerLabel(holder.owner)}`,
        { id: name, owner: holder.owner },
      );
    }
    const handle = blocks.install(name, owner, { capability, failing: false }, "prompt", name);
    if (handle === undefined) return failed(`${blockLabel(name, owner)} could not be added`);
    return installed(handle);
  }

  function assemble(sealed: SealedContext): AssembledPrompt {
    const names: string[] = [];
    const texts: string[] = [];
    for (const record of order()) {
      let text: unknown;
      try {
        text = record.value.capability.render();
      } catch (error) {
        report(record, error);
        continue;
      }
      if (typeof text !== "string") {
        report(
          record,
          new TypeError(`prompt block '${record.id}' rendered ${typeof text}, not a string`),
        );
        continue;
      }
      record.value.failing = false;
      if (text === "") continue;
      names.push(record.id);
      texts.push(text);
    }

    let lead = 0;
    while (lead < sealed.length && sealed[lead].role === "system") lead++;
    const messages: Message[] = new Array(sealed.length + names.length);
    let at = 0;
    for (let i = 0; i < lead; i++) messages[at++] = sealed[i];
    for (let i = 0; i < names.length; i++) {
      messages[at++] = { role: "system", content: texts[i], source: names[i] };
    }
    for (let i = lead; i < sealed.length; i++) messages[at++] = sealed[i];

    let firstChanged: string | undefined;
    const span = Math.max(names.length, lastNames.length);
    for (let i = 0; i < span; i++) {
      if (names[i] !== lastNames[i] || texts[i] !== lastTexts[i]) {
        // A block that vanished from the tail has no successor: name the one that went.
        firstChanged = names[i] ?? lastNames[i];
        break;
      }
    }
    lastNames = names;
    lastTexts = texts;

    const result: AssembledPrompt = firstChanged === undefined
      ? { messages, blocks: names }
      : { messages, blocks: names, firstChanged };
    return result;
  }

  return {
    install,
    assemble,
    entries(): readonly RegistryEntry[] {
      return blocks.entries();
    },
    purge(owner: string): readonly string[] {
      return blocks.purge(owner);
    },
    get version(): number {
      return blocks.version;
    },
  };
}

/**
 * Why a render failed, as one line: handy for an `onError` that logs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeBlockError } from "@amber/registries/prompts";
 * assert.equal(
 *   describeBlockError("p", "rules", new Error("boom")),
 *   "prompt block 'rules' of plugin 'p' failed: boom",
 * );
 * ```
 */
export function describeBlockError(owner: string, name: string, error: unknown): string {
  return `prompt block '${name}' of ${ownerLabel(owner)} failed: ${errorMessage(error)}`;
}

function blockLabel(name: string, owner: string): string {
  return `prompt block '${name}' from ${ownerLabel(owner)}`;
}
