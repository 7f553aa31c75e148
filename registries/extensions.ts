/**
 * The registries of the kernel's extension points: phase hooks, tool gates, run-end guards,
 * compactors, action kinds and state keys. All six are one named registry: an entry per
 * capability, its name unique across the harness, a collision naming both plugins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGateRegistry } from "@amber/registries/extensions";
 * import { EventBus } from "@amber/core";
 *
 * const gates = createGateRegistry();
 * const services = {
 *   owner: "safety",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * gates.install("safety", {
 *   kind: "gate",
 *   name: "no_rm",
 *   check: ({ call }) =>
 *     call.arguments.includes("rm -rf")
 *       ? { kind: "block", reason: "no rm -rf" }
 *       : { kind: "allow" },
 * }, services);
 * assert.deepEqual(gates.list().map((entry) => `${entry.owner}/${entry.name}`), ["safety/no_rm"]);
 * ```
 *
 * @module
 */

import {
  type ActionCapability,
  type CompactorCapability,
  failed,
  type GateCapability,
  type GuardCapability,
  type HookCapability,
  installed,
  type InstallResult,
  type NamedEntry,
  type NamedRegistry,
  PHASE_HOOK_POINTS,
  type PluginServices,
  type RegistryEntry,
  type StateKeyCapability,
} from "@amber/core";
import { errorMessage, OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

type NamedCapability =
  | HookCapability
  | GateCapability
  | GuardCapability
  | CompactorCapability
  | ActionCapability
  | StateKeyCapability;

// What tells one named registry from another: its dispatch key, how errors call it, and what
// its capability needs beyond a kind and a name.
interface NamedKind<C extends NamedCapability> {
  readonly kind: C["kind"];
  readonly label: string;
  readonly check: (capability: Readonly<Record<string, unknown>>) => string | undefined;
}

// Computed once: the hook check must not build this list on every install.
const VALID_POINTS: string = PHASE_HOOK_POINTS.join(", ");

const HOOK: NamedKind<HookCapability> = {
  kind: "hook",
  label: "phase hook",
  check: (capability) => {
    const point = capability.point;
    if (point === undefined) return `has no point; valid points are ${VALID_POINTS}`;
    if (!(PHASE_HOOK_POINTS as readonly unknown[]).includes(point)) {
      return `has point ${describe(point)}, which is not one of ${VALID_POINTS}`;
    }
    return typeof capability.run === "function" ? undefined : "has no run function";
  },
};

const GATE: NamedKind<GateCapability> = {
  kind: "gate",
  label: "tool gate",
  check: (capability) =>
    typeof capability.check === "function" ? undefined : "has no check function",
};

const GUARD: NamedKind<GuardCapability> = {
  kind: "guard",
  label: "run-end guard",
  check: (capability) =>
    typeof capability.decide === "function" ? undefined : "has no decide function",
};

const COMPACTOR: NamedKind<CompactorCapability> = {
  kind: "compactor",
  label: "compactor",
  check: (capability) =>
    typeof capability.compact === "function" ? undefined : "has no compact function",
};

const ACTION: NamedKind<ActionCapability> = {
  kind: "action",
  label: "action kind",
  check: (capability) => typeof capability.run === "function" ? undefined : "has no run function",
};

const STATE: NamedKind<StateKeyCapability> = {
  kind: "state",
  label: "state key",
  // `initial: undefined` is a real starting value; a missing key is a forgotten one.
  check: (capability) =>
    "initial" in capability
      ? undefined
      : "has no initial value (set `initial`; undefined is allowed when written out)",
};

/**
 * Creates an empty registry of phase hooks. A hook's `point` must be one of
 * `PHASE_HOOK_POINTS` and its `run` a function; names are unique across the harness.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHookRegistry } from "@amber/registries/extensions";
 * import { EventBus, type HookCapability } from "@amber/core";
 *
 * const hooks = createHookRegistry();
 * const services = {
 *   owner: "todo",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const hook: HookCapability = { kind: "hook", name: "count", point: "StepEnd", run: () => ({}) };
 * assert.equal(hooks.install("todo", hook, services).status, "installed");
 * const clash = hooks.install("other", hook, services);
 * assert.ok(clash.status === "failed");
 * assert.deepEqual(clash.conflict, { id: "count", owner: "todo" });
 * assert.equal(hooks.get("count")?.capability.point, "StepEnd");
 * ```
 */
export function createHookRegistry(): NamedRegistry<HookCapability> {
  return createNamedRegistry(HOOK);
}

/**
 * Creates an empty registry of tool gates. A gate's `check` must be a function; names are
 * unique across the harness.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGateRegistry } from "@amber/registries/extensions";
 * import { EventBus, type GateCapability } from "@amber/core";
 *
 * const gates = createGateRegistry();
 * const services = {
 *   owner: "a",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const gate: GateCapability = { kind: "gate", name: "no_rm", check: () => ({ kind: "allow" }) };
 * gates.install("a", gate, services);
 * const clash = gates.install("b", gate, services);
 * assert.ok(clash.status === "failed");
 * assert.equal(
 *   clash.error,
 *   "tool gate 'no_rm' of plugin 'b' collides with the tool gate of plugin 'a'",
 * );
 * ```
 */
export function createGateRegistry(): NamedRegistry<GateCapability> {
  return createNamedRegistry(GATE);
}

/**
 * Creates an empty registry of run-end guards. A guard's `decide` must be a function; names
 * are unique across the harness.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGuardRegistry } from "@amber/registries/extensions";
 * import { EventBus } from "@amber/core";
 *
 * const guards = createGuardRegistry();
 * const services = {
 *   owner: "tests",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const result = guards.install("tests", {
 *   kind: "guard",
 *   name: "tests_pass",
 *   decide: () => ({ kind: "complete" }),
 * }, services);
 * assert.equal(guards.list().length, 1);
 * assert.ok(result.status === "installed");
 * result.contribution.remove();
 * assert.equal(guards.list().length, 0);
 * ```
 */
export function createGuardRegistry(): NamedRegistry<GuardCapability> {
  return createNamedRegistry(GUARD);
}

/**
 * Creates an empty registry of compactors. A compactor's `compact` must be a function; names
 * are unique across the harness. The registry keeps registration order; the execution
 * environment puts them in chain order (see `buildEnvironment`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCompactorRegistry } from "@amber/registries/extensions";
 * import { type CompactorCapability, EventBus } from "@amber/core";
 *
 * const compactors = createCompactorRegistry();
 * const services = {
 *   owner: "trim",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const trim: CompactorCapability = {
 *   kind: "compactor",
 *   name: "trim",
 *   compact: (input, next) => next(input),
 * };
 * const result = compactors.install("trim", trim, services);
 * assert.ok(result.status === "installed");
 * const clash = compactors.install("other", trim, services);
 * assert.ok(clash.status === "failed");
 * assert.equal(clash.error, "compactor 'trim' of plugin 'other' collides with the compactor of plugin 'trim'");
 * const broken = { kind: "compactor", name: "broken" } as unknown as CompactorCapability;
 * assert.equal(compactors.install("b", broken, services).status, "failed");
 * result.contribution.remove();
 * assert.equal(compactors.list().length, 0);
 * ```
 */
export function createCompactorRegistry(): NamedRegistry<CompactorCapability> {
  return createNamedRegistry(COMPACTOR);
}

/**
 * Creates an empty registry of action kinds. An action's `run` must be a function; names are
 * unique across the harness.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createActionRegistry } from "@amber/registries/extensions";
 * import { EventBus } from "@amber/core";
 *
 * const actions = createActionRegistry();
 * const services = {
 *   owner: "ops",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * actions.install("ops", {
 *   kind: "action",
 *   name: "deploy",
 *   run: ({ correlationId }) => Promise.resolve({ ok: true, output: `queued ${correlationId}` }),
 * }, services);
 * assert.deepEqual(actions.purge("ops"), ["deploy"]);
 * assert.equal(actions.list().length, 0);
 * ```
 */
export function createActionRegistry(): NamedRegistry<ActionCapability> {
  return createNamedRegistry(ACTION);
}

/**
 * Creates an empty registry of state keys. A key must carry an `initial` property (its value
 * may be `undefined`, but the property must be written out); names are unique across the
 * harness.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStateKeyRegistry } from "@amber/registries/extensions";
 * import { EventBus, type StateKeyCapability } from "@amber/core";
 *
 * const state = createStateKeyRegistry();
 * const services = {
 *   owner: "todo",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * state.install("todo", { kind: "state", name: "todo.count", initial: 0 }, services);
 * const missing = { kind: "state", name: "todo.open" } as unknown as StateKeyCapability;
 * assert.equal(state.install("todo", missing, services).status, "failed");
 * assert.equal(state.get("todo.count")?.capability.initial, 0);
 * ```
 */
export function createStateKeyRegistry(): NamedRegistry<StateKeyCapability> {
  return createNamedRegistry(STATE);
}

// The one implementation behind all six. The capability itself is the record's value, and the
// record is the contribution handle, so an install allocates one object besides its result.
function createNamedRegistry<C extends NamedCapability>(spec: NamedKind<C>): NamedRegistry<C> {
  const map = new OwnedMap<C>();
  // Entries are made the first time someone asks and kept while their record lives, so `get`
  // and `list` hand out the same object and installs never pay for one.
  const made = new WeakMap<OwnedRecord<C>, NamedEntry<C>>();
  let listed: readonly NamedEntry<C>[] | undefined;
  let listedAt = -1;

  function entryOf(record: OwnedRecord<C>): NamedEntry<C> {
    let entry = made.get(record);
    if (entry === undefined) {
      entry = Object.freeze({ name: record.id, owner: record.owner, capability: record.value });
      made.set(record, entry);
    }
    return entry;
  }

  function install(owner: string, capability: C, _services: PluginServices): InstallResult {
    let fault: string | undefined;
    try {
      fault = problem(spec, capability);
    } catch (error) {
      // A capability built of getters or proxies can throw while it is read.
      fault = `could not be read: ${errorMessage(error)}`;
    }
    if (fault !== undefined) {
      return failed(`${spec.label}${nameLabel(capability)} of ${ownerLabel(owner)} ${fault}`);
    }
    const name = capability.name;
    const holder = map.get(name);
    if (holder !== undefined) {
      return failed(
        `${spec.label} '${name}' of ${ownerLabel(owner)} collides with the ${spec.label} of ${
          ownerLabel(holder.owner)
        }`,
        { id: name, owner: holder.owner },
      );
    }
    return installed(map.install(name, owner, capability, spec.kind, name)!);
  }

  return {
    install,
    get(name: string): NamedEntry<C> | undefined {
      const record = map.get(name);
      return record === undefined ? undefined : entryOf(record);
    },
    list(): readonly NamedEntry<C>[] {
      if (listed === undefined || listedAt !== map.version) {
        listed = Object.freeze(map.records().map(entryOf));
        listedAt = map.version;
      }
      return listed;
    },
    entries(): readonly RegistryEntry[] {
      return map.entries();
    },
    purge(owner: string): readonly string[] {
      return map.purge(owner);
    },
    get version(): number {
      return map.version;
    },
  };
}

// What is wrong with a capability, or undefined: the checks every named kind shares, then its own.
function problem<C extends NamedCapability>(spec: NamedKind<C>, capability: C): string | undefined {
  if (typeof capability !== "object" || capability === null) return "is not an object";
  if (capability.kind !== spec.kind) {
    return `has kind '${String(capability.kind)}', not '${spec.kind}'`;
  }
  const name: unknown = capability.name;
  if (typeof name !== "string" || name.trim() === "") return "has no name";
  return spec.check(capability as unknown as Readonly<Record<string, unknown>>);
}

// ` 'name'` when the capability has a usable name, else nothing; never throws, since it runs on
// capabilities that already failed to be read.
function nameLabel(capability: unknown): string {
  try {
    const name: unknown = (capability as { readonly name?: unknown } | null)?.name;
    return typeof name === "string" && name.trim() !== "" ? ` '${name}'` : "";
  } catch {
    return "";
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  return value === null ? "null" : `of type ${typeof value}`;
}
