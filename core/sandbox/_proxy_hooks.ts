// A sandboxed plugin's part in a run: phase hooks, tool gates, run-end guards, scheduled actions
// and state keys. The run's state store crosses as its entries; an answer comes back as the
// plugin gave it, and the kernel judges it as it judges any plugin's (a malformed gate outcome
// blocks: the gate chain fails closed). A hook's `compaction` adjustment is checked here too,
// since it steers what the host does to the whole conversation: a malformed one rejects. A
// failure rejects, and the kernel contains it.

import type {
  ActionCapability,
  GateCapability,
  GateOutcome,
  GuardCapability,
  HookCapability,
  HookReaction,
  RunEndDecision,
  StateKeyCapability,
} from "../hooks.ts";
import type { ToolResult } from "../tool.ts";
import { checkAdjustment, SandboxedCompactionError } from "./_compaction_answers.ts";
import type { Refuse } from "./_dialect_answers.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import {
  type ActionRunParams,
  type CapabilityDescriptor,
  type GateCheckParams,
  type GuardDecideParams,
  type HookRunParams,
  Method,
  type StateEntries,
} from "./protocol.ts";

type Descriptor<K extends CapabilityDescriptor["kind"]> = Extract<
  CapabilityDescriptor,
  { readonly kind: K }
>;

/** The host's phase hook for a `hook` descriptor. */
export function proxyHook(descriptor: Descriptor<"hook">, link: ProxyLink): HookCapability {
  const { name, point } = descriptor;
  const what = `hook '${name}' of plugin '${link.pluginId}'`;
  const refuse: Refuse = (message) => {
    throw new SandboxedCompactionError(link.pluginId, what, message);
  };
  return {
    kind: "hook",
    name,
    point,
    run: async (input) => {
      const params: HookRunParams = {
        name,
        input: {
          point: input.point,
          step: input.step,
          transcript: input.transcript,
          state: stateEntries(input.state),
          ...(input.tool === undefined ? {} : { tool: input.tool }),
          ...(input.compaction === undefined ? {} : { compaction: input.compaction }),
        },
      };
      const reaction = await link.call<HookReaction>(Method.hookRun, params, "hook", what);
      const compaction = (reaction as Partial<HookReaction> | null)?.compaction;
      if (compaction === undefined) return reaction;
      return { ...reaction, compaction: checkAdjustment(compaction, refuse) };
    },
  };
}

/** The host's tool gate for a `gate` descriptor. */
export function proxyGate(descriptor: Descriptor<"gate">, link: ProxyLink): GateCapability {
  const name = descriptor.name;
  const what = `tool gate '${name}' of plugin '${link.pluginId}'`;
  return {
    kind: "gate",
    name,
    check: (input) => {
      const params: GateCheckParams = {
        name,
        input: { call: input.call, args: input.args, state: stateEntries(input.state) },
      };
      return link.call<GateOutcome>(Method.gateCheck, params, "gate", what);
    },
  };
}

/** The host's run-end guard for a `guard` descriptor. */
export function proxyGuard(descriptor: Descriptor<"guard">, link: ProxyLink): GuardCapability {
  const name = descriptor.name;
  const what = `run-end guard '${name}' of plugin '${link.pluginId}'`;
  return {
    kind: "guard",
    name,
    decide: (input) => {
      const params: GuardDecideParams = {
        name,
        input: { step: input.step, transcript: input.transcript, state: stateEntries(input.state) },
      };
      return link.call<RunEndDecision>(Method.guardDecide, params, "guard", what);
    },
  };
}

/** The host's action kind for an `action` descriptor; the run's cancel crosses with it. */
export function proxyAction(descriptor: Descriptor<"action">, link: ProxyLink): ActionCapability {
  const name = descriptor.name;
  const what = `action '${name}' of plugin '${link.pluginId}'`;
  return {
    kind: "action",
    name,
    run: (input) => {
      const params: ActionRunParams = {
        name,
        input: { correlationId: input.correlationId, call: input.call },
      };
      return link.call<ToolResult>(
        Method.actionRun,
        params,
        "action",
        what,
        input.signal === undefined ? {} : { signal: input.signal },
      );
    },
  };
}

/** The host's state key for a `state` descriptor: plain data. */
export function proxyStateKey(descriptor: Descriptor<"state">): StateKeyCapability {
  return { kind: "state", name: descriptor.name, initial: descriptor.initial };
}

/** The run's state store as it crosses: its entries. */
export function stateEntries(state: ReadonlyMap<string, unknown>): StateEntries {
  return [...state.entries()];
}
