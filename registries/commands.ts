/**
 * The command registry: slash-command namespaces. Core roots are fixed when the registry is
 * made; plugins add their own roots, each with a subtree (the completions.json shape) and one
 * handler per executable leaf. The merged tree is rebuilt on every change, and dispatch looks
 * the handler up in the live registry, so toggling a plugin adds or removes its commands at once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { EventBus } from "@amber/core";
 *
 * const commands = createCommandRegistry();
 * const services = {
 *   owner: "hello",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * commands.install("hello", {
 *   kind: "command",
 *   name: "hello",
 *   root: "hello",
 *   help: "Say hello",
 *   man: "Usage: /hello greet <name>",
 *   subtree: { greet: { help: "Greet someone by name" } },
 *   handlers: { greet: (arg) => `Hello, ${arg || "world"}!` },
 * }, services);
 * const outcome = await commands.dispatch("hello", ["greet"], "amber");
 * assert.deepEqual(outcome, { ok: true, text: "Hello, amber!" });
 * ```
 *
 * @module
 */

import {
  type CommandCapability,
  type CommandHandler,
  type CommandNode,
  type CommandOutcome,
  type CommandRegistry,
  type CommandReply,
  commandReplyProblem,
  type CommandRoot,
  type CommandTreeNode,
  failed,
  installed,
  type InstallResult,
  type PluginServices,
  type RegistryEntry,
} from "@amber/core";
import { errorMessage, OwnedMap, ownerLabel } from "./_owned.ts";

/**
 * What a root word must look like: a-z 0-9 _ -, and `:` between the words of a namespace
 * (`/git:commit`, a markdown command in a subfolder).
 */
export const COMMAND_ROOT_PATTERN: RegExp = /^[a-z0-9_-]+(?::[a-z0-9_-]+)*$/;

/**
 * A core command root, given to {@link createCommandRegistry}. Handlers are keyed by the dotted
 * path of a leaf below the root; the key `""` is the root itself when it has no subtree.
 */
export interface CoreCommandRoot {
  /** One line of help. */
  readonly help: string;
  /** The manual. */
  readonly man?: string;
  /** The nodes below the root. */
  readonly subtree?: { readonly [name: string]: CommandNode };
  /** Handlers by dotted path. */
  readonly handlers?: { readonly [path: string]: CommandHandler };
}

/** The core's roots by root word (`help`, `set`, ...). */
export type CoreCommandRoots = { readonly [root: string]: CoreCommandRoot };

/** Options of {@link createCommandRegistry}. */
export interface CommandRegistryOptions {
  /** The core's roots: owned by `core`, never removed. */
  readonly coreRoots?: CoreCommandRoots;
  /**
   * Receives what a plugin's handler threw, with the plugin and the command line (`/root sub`),
   * after the dispatch has turned it into its failed outcome: a host counts it as the plugin's
   * fault. Not called for core's handlers.
   */
  readonly onHandlerError?: (owner: string, line: string, error: unknown) => void;
}

type Tree = { readonly [name: string]: CommandNode };
type Handlers = { readonly [path: string]: CommandHandler };

// A root as installed. The spec is kept as given and checked once at install; the tree node is
// built the first time `tree()` asks for it, so enabling a plugin costs only the check.
interface Slot {
  readonly word: string;
  readonly owner: string;
  readonly help: string;
  readonly man: string;
  readonly subtree: Tree;
  readonly handlers: Handlers;
  node: CommandRoot | undefined;
}

const EMPTY: Tree = Object.freeze({});
const NODE_NAME = /^[^\s.]+$/;

/**
 * Creates a command registry holding `options.coreRoots`.
 *
 * A plugin root is refused when it is not `[a-z0-9_-]+`, when it collides with a core root or
 * another plugin's root (the error names both), when a node name is not a single word, or when a
 * handler key names no leaf of its subtree. Each executable leaf's action is
 * `plugin.<owner>.<root>.<path>` (`core.<root>.<path>` for core): the root is part of it so that
 * a plugin with two roots never derives one action twice. A root that is itself the leaf (handler
 * key `""`) has the action without a path. A leaf without a handler is listed but inert. A
 * handler that throws fails its dispatch with what it threw, and a plugin's is also handed to
 * `options.onHandlerError`; nothing a handler throws escapes. A handler returns text, or a
 * `CommandReply` whose `prompt` the outcome carries for the front end to send to the model;
 * anything else fails the dispatch with an error naming the command.
 *
 * @throws {Error} when a core root is malformed: that is a bug in the host, not a plugin fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 *
 * const commands = createCommandRegistry({
 *   coreRoots: { help: { help: "Show help", handlers: { "": () => "Commands: /help" } } },
 * });
 * const roots = commands.tree().map((root) => `${root.name} ${root.action}`);
 * assert.deepEqual(roots, ["help core.help"]);
 * const outcome = await commands.dispatch("nope", [], "");
 * assert.deepEqual(outcome, { ok: false, error: "unknown command '/nope'; commands: /help" });
 * ```
 *
 * @example A plugin's handler that throws is reported, and its outcome says so
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { EventBus } from "@amber/core";
 *
 * const reported: string[] = [];
 * const commands = createCommandRegistry({
 *   onHandlerError: (owner, line, error) =>
 *     reported.push(`${owner} ${line}: ${(error as Error).message}`),
 * });
 * commands.install("flaky", {
 *   kind: "command",
 *   name: "flaky",
 *   root: "flaky",
 *   help: "Fails",
 *   subtree: { go: { help: "Go" } },
 *   handlers: {
 *     go: () => {
 *       throw new Error("boom");
 *     },
 *   },
 * }, {
 *   owner: "flaky",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * });
 * const outcome = await commands.dispatch("flaky", ["go"], "");
 * assert.deepEqual(outcome, { ok: false, error: "'/flaky go' failed: boom" });
 * assert.deepEqual(reported, ["flaky /flaky go: boom"]);
 * ```
 *
 * @example A handler's reply may carry a prompt for the model
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 *
 * const commands = createCommandRegistry({
 *   coreRoots: {
 *     review: { help: "Ask for a review", handlers: { "": (arg) => ({ prompt: `Review ${arg}.` }) } },
 *     broken: { help: "Returns garbage", handlers: { "": () => ({ output: "x" }) as never } },
 *   },
 * });
 * assert.deepEqual(await commands.dispatch("review", [], "main.ts"), {
 *   ok: true,
 *   text: "",
 *   prompt: "Review main.ts.",
 * });
 * assert.deepEqual(await commands.dispatch("broken", [], ""), {
 *   ok: false,
 *   error: "'/broken' failed: its handler returned a reply with neither text nor prompt",
 * });
 * ```
 */
export function createCommandRegistry(options: CommandRegistryOptions = {}): CommandRegistry {
  const roots = new OwnedMap<Slot>();
  const fixed = new Set<string>();
  const onHandlerError = options.onHandlerError;
  // The outcome is what the user sees; a sink that fails must not change it.
  const reportHandlerError = (owner: string, line: string, error: unknown): void => {
    try {
      onHandlerError?.(owner, line, error);
    } catch {
      // Nothing to report it to.
    }
  };
  let tree: readonly CommandRoot[] | undefined;
  let treeAt = -1;

  for (const [word, spec] of Object.entries(options.coreRoots ?? {})) {
    if (!COMMAND_ROOT_PATTERN.test(word)) {
      throw new Error(
        `core command root '/${word}' is not valid: a root is one or more of a-z 0-9 _ -`,
      );
    }
    const subtree = spec?.subtree ?? EMPTY;
    const handlers = spec?.handlers ?? EMPTY;
    const problem = check(spec?.help, spec?.man, subtree, handlers);
    if (problem !== undefined) throw new Error(rootLabel(word, "core") + problem);
    roots.add(word, "core", {
      word,
      owner: "core",
      help: spec.help,
      man: spec.man ?? "",
      subtree,
      handlers: handlers as Handlers,
      node: undefined,
    });
    fixed.add(word);
  }

  function install(
    owner: string,
    capability: CommandCapability,
    _services: PluginServices,
  ): InstallResult {
    const word: unknown = capability?.root;
    if (typeof word !== "string" || !COMMAND_ROOT_PATTERN.test(word)) {
      return failed(
        `command root ${typeof word === "string" ? `'/${word}'` : "(none)"} from ${
          ownerLabel(owner)
        } is not valid: a root is one or more of a-z 0-9 _ -`,
      );
    }
    const holder = roots.get(word);
    if (holder !== undefined) {
      return failed(
        `command root '/${word}' from ${ownerLabel(owner)} collides with ${
          ownerLabel(holder.owner)
        }`,
        { id: word, owner: holder.owner },
      );
    }
    const { help, man, subtree, handlers } = capability;
    let problem: string | undefined;
    try {
      problem = check(help, man, subtree, handlers);
    } catch (error) {
      // A subtree built of getters or proxies can throw while it is read.
      problem = ` could not be read: ${errorMessage(error)}`;
    }
    if (problem !== undefined) return failed(rootLabel(word, owner) + problem);
    const handle = roots.install(
      word,
      owner,
      {
        word,
        owner,
        help,
        man: man ?? "",
        subtree,
        handlers: handlers ?? EMPTY,
        node: undefined,
      },
      "command",
      capability.name,
    );
    if (handle === undefined) return failed(`command root '/${word}' could not be added`);
    return installed(handle);
  }

  async function dispatch(
    root: string,
    path: readonly string[],
    arg: string,
  ): Promise<CommandOutcome> {
    const word = root.startsWith("/") ? root.slice(1) : root;
    const slot = roots.get(word)?.value;
    if (slot === undefined) {
      const known = roots.records().map((record) => `/${record.id}`);
      return {
        ok: false,
        error: `unknown command '/${word}'; commands: ${
          known.length ? known.join(", ") : "(none)"
        }`,
      };
    }
    let children: { readonly [key: string]: unknown } = slot.subtree;
    let dotted = "";
    let line = `/${word}`;
    for (const step of path) {
      const next = Object.hasOwn(children, step) ? children[step] : undefined;
      if (!isRecord(next)) {
        const options = Object.keys(children);
        return {
          ok: false,
          error: `unknown command '${line} ${step}'; ` +
            (options.length
              ? `'${line}' has: ${options.join(", ")}`
              : `'${line}' has no subcommands`),
        };
      }
      children = isRecord(next.children) ? next.children : EMPTY;
      dotted = dotted === "" ? step : `${dotted}.${step}`;
      line += ` ${step}`;
    }
    const handler = Object.hasOwn(slot.handlers, dotted) ? slot.handlers[dotted] : undefined;
    if (typeof handler !== "function") {
      const options = Object.keys(children);
      if (options.length > 0) {
        return { ok: false, error: `'${line}' needs a subcommand: ${options.join(", ")}` };
      }
      return { ok: false, error: `'${line}' has no handler` };
    }
    let reply: unknown;
    try {
      reply = await handler(arg);
    } catch (error) {
      if (slot.owner !== "core") reportHandlerError(slot.owner, line, error);
      return { ok: false, error: `'${line}' failed: ${errorMessage(error)}` };
    }
    const problem = commandReplyProblem(reply);
    if (problem !== undefined) {
      return { ok: false, error: `'${line}' failed: its handler ${problem}` };
    }
    if (typeof reply === "string") return { ok: true, text: reply };
    const { text, prompt, turn } = reply as CommandReply;
    if (prompt === undefined) return { ok: true, text: text ?? "" };
    return turn === undefined
      ? { ok: true, text: text ?? "", prompt }
      : { ok: true, text: text ?? "", prompt, turn };
  }

  return {
    install,
    dispatch,
    tree(): readonly CommandRoot[] {
      if (treeAt !== roots.version || tree === undefined) {
        treeAt = roots.version;
        tree = Object.freeze(
          roots.records().map((record) => record.value.node ??= rootNode(record.value)),
        );
      }
      return tree;
    },
    entries(): readonly RegistryEntry[] {
      return roots.entries();
    },
    purge(owner: string): readonly string[] {
      if (owner !== "core") return roots.purge(owner);
      // The core roots given at construction stay; only roots installed as core go.
      const removed: string[] = [];
      for (const record of roots.records()) {
        if (record.owner === "core" && !fixed.has(record.id)) {
          roots.delete(record.id, "core");
          removed.push(record.id);
        }
      }
      return removed;
    },
    get version(): number {
      return roots.version;
    },
  };
}

// Checks a root's spec; returns the first problem, worded for the plugin's author, to follow the
// root's label ("command root '/x' from plugin 'y'"). The label is left to the caller so the
// common, valid case builds no strings at all.
function check(
  help: unknown,
  man: unknown,
  subtree: unknown,
  handlers: unknown,
): string | undefined {
  if (typeof help !== "string") return " has no help text";
  if (man !== undefined && typeof man !== "string") return " has a man that is not text";
  if (!isRecord(subtree)) return " has no subtree object";
  if (handlers !== undefined && !isRecord(handlers)) return " has no handlers object";
  const problem = checkNodes(subtree, "");
  if (problem !== undefined) return problem;
  if (handlers === undefined) return undefined;
  // Object.keys rather than for-in with hasOwn checks: this runs for every command at every
  // enable (measured: the costliest install check of bench/runtime_bench.ts).
  const keys = Object.keys(handlers);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k];
    let children: { readonly [key: string]: unknown } = subtree;
    if (key !== "") {
      // Walked without split.
      let start = 0;
      for (;;) {
        const dot = key.indexOf(".", start);
        const step = dot < 0 ? (start === 0 ? key : key.slice(start)) : key.slice(start, dot);
        const next = Object.hasOwn(children, step) ? children[step] : undefined;
        if (!isRecord(next)) return `: handler '${key}' names no leaf of its subtree`;
        const below = next.children;
        children = below !== undefined && isRecord(below) ? below : EMPTY;
        if (dot < 0) break;
        start = dot + 1;
      }
    }
    if (children !== EMPTY && Object.keys(children).length > 0) {
      return `: handler '${key}' names ${
        key === "" ? "the root" : `'${key}'`
      }, which has subcommands, not a leaf`;
    }
    if (typeof handlers[key] !== "function") return `: handler '${key}' is not a function`;
  }
  return undefined;
}

function checkNodes(
  children: { readonly [key: string]: unknown },
  path: string,
): string | undefined {
  const names = Object.keys(children);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (!NODE_NAME.test(name)) {
      return `: node name '${join(path, name)}' is not valid: one word, no dots`;
    }
    const spec = children[name];
    if (!isRecord(spec)) return `: node '${join(path, name)}' is not an object`;
    if (spec.help !== undefined && typeof spec.help !== "string") {
      return `: node '${join(path, name)}' has help that is not text`;
    }
    if (spec.man !== undefined && typeof spec.man !== "string") {
      return `: node '${join(path, name)}' has a man that is not text`;
    }
    if (spec.children !== undefined) {
      if (!isRecord(spec.children)) {
        return `: node '${join(path, name)}' has children that are not an object`;
      }
      const problem = checkNodes(spec.children, join(path, name));
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

function join(path: string, name: string): string {
  return path === "" ? name : `${path}.${name}`;
}

function rootLabel(word: string, owner: string): string {
  return `command root '/${word}' from ${ownerLabel(owner)}`;
}

function rootNode(slot: Slot): CommandRoot {
  const base = treeNode(slot, slot.word, "", slot.help, slot.man, slot.subtree);
  return Object.freeze({ ...base, owner: slot.owner });
}

function treeNode(
  slot: Slot,
  name: string,
  path: string,
  help: string,
  man: string,
  children: Tree,
): CommandTreeNode {
  const kids: CommandTreeNode[] = [];
  for (const child in children) {
    if (!Object.hasOwn(children, child)) continue;
    const spec = children[child];
    kids.push(treeNode(
      slot,
      child,
      path === "" ? child : `${path}.${child}`,
      spec.help ?? "",
      spec.man ?? "",
      spec.children ?? EMPTY,
    ));
  }
  const handler = Object.hasOwn(slot.handlers, path) ? slot.handlers[path] : undefined;
  if (typeof handler !== "function") {
    return Object.freeze({ name, path, help, man, children: Object.freeze(kids) });
  }
  // The root is part of every action, so one plugin with two roots never derives the same action
  // twice, and a plugin action can never equal a core one.
  const prefix = slot.owner === "core" ? `core.${slot.word}` : `plugin.${slot.owner}.${slot.word}`;
  const action = path === "" ? prefix : `${prefix}.${path}`;
  return Object.freeze({ name, path, help, man, action, children: Object.freeze(kids) });
}

function isRecord(value: unknown): value is { readonly [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
