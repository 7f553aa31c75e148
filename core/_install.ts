// Installing one plugin's capabilities into the registries, all or nothing: the step that
// activation and live refresh share. Every contribution is checked against the plugin's bound
// as it lands, and the first failure takes back everything this call installed.

import { admits, type CapabilityBound } from "./bound.ts";
import { axisOf, boundId, enforceBound } from "./bound_check.ts";
import type { Capability } from "./capability.ts";
import {
  CAPABILITY_KINDS,
  type CapabilityKind,
  type Contribution,
  type InstallResult,
} from "./contribution.ts";
import { describeError } from "./errors.ts";
import type { PhaseHookPoint } from "./hooks.ts";
import type { UnwindFault } from "./ledger.ts";
import type { Registries } from "./registries.ts";
import type { OwnedRegistry } from "./registry.ts";
import { ResolutionError } from "./resolution_error.ts";
import type { PluginServices } from "./services.ts";

/** What installing a capability list gave. */
export type InstallOutcome =
  | {
    readonly ok: true;
    readonly contributions: Contribution[];
    readonly declined: readonly { name: string; reason: string }[];
  }
  | {
    readonly ok: false;
    readonly reason: string;
    readonly failure?: ResolutionError;
    /**
     * Whether a registry may have kept something no handle can take back: an `install` threw
     * (it may have added its entry first) or a `remove` taking back this call's work threw
     * (listed in `faults`). The owner's registries are then swept.
     */
    readonly unclean: boolean;
    readonly faults: readonly UnwindFault[];
  };

const KINDS: ReadonlySet<string> = new Set(CAPABILITY_KINDS);
const NOTHING_DECLINED: readonly { name: string; reason: string }[] = Object.freeze([]);

/**
 * Installs `capabilities` for `owner`. On failure nothing of them stays installed and the
 * outcome says why, naming the capability and, for a bound or a collision, the rule.
 */
export function installCapabilities(
  registries: Registries,
  owner: string,
  capabilities: readonly Capability[],
  services: PluginServices,
  bound: CapabilityBound | undefined,
): InstallOutcome {
  const problem = checkShape(capabilities);
  if (problem !== undefined) return { ok: false, reason: problem, unclean: false, faults: [] };
  // Sized up front: an array grown by push keeps room for seventeen, and it lives as long as
  // the plugin is on (the ledger takes it over).
  const contributions: Contribution[] = new Array(capabilities.length);
  let count = 0;
  let declined: { name: string; reason: string }[] | undefined;
  for (let i = 0; i < capabilities.length; i++) {
    const capability = capabilities[i];
    const kind: CapabilityKind = capability.kind;
    const registry = registries[kind] as OwnedRegistry<Capability>;
    let result: InstallResult;
    try {
      result = registry.install(owner, capability, services);
    } catch (error) {
      const reason = `${label(capability)} failed: ${describeError(error)}`;
      return undo(contributions, count, reason, undefined, true);
    }
    if (result.status === "declined") {
      (declined ??= []).push({ name: capability.name, reason: result.reason });
      continue;
    }
    if (result.status === "failed") {
      const conflict = result.conflict;
      const reason = `${label(capability)} failed: ${result.error}`;
      const failure = conflict === undefined ? undefined : new ResolutionError({
        rule: "duplicate-id",
        pluginIds: conflict.owner === owner ? [owner] : [conflict.owner, owner],
        message: reason,
        axis: axisOf(kind, conflict.id),
        id: boundId(kind, conflict.id),
      });
      return undo(contributions, count, reason, failure);
    }
    const contribution = result.contribution;
    contributions[count++] = contribution;
    if (contribution.kind !== kind) {
      return undo(
        contributions,
        count,
        `${label(capability)} installed a '${contribution.kind}' contribution`,
      );
    }
    const point = kind === "hook" ? (capability as { point: PhaseHookPoint }).point : undefined;
    if (!withinBound(bound, kind, contribution, point)) {
      const violation = enforceBound(owner, bound, [{ kind, ids: contribution.ids, point }])[0];
      return undo(contributions, count, `${label(capability)}: ${violation.message}`, violation);
    }
  }
  if (count < contributions.length) contributions.length = count;
  return { ok: true, contributions, declined: declined ?? NOTHING_DECLINED };
}

// Takes back, newest first, what this call installed. A remove that throws does not stop the
// others; the caller reports it and sweeps the owner's registries.
function undo(
  contributions: readonly Contribution[],
  count: number,
  reason: string,
  failure?: ResolutionError,
  threw = false,
): InstallOutcome {
  let faults: UnwindFault[] | undefined;
  for (let i = count - 1; i >= 0; i--) {
    const contribution = contributions[i];
    try {
      contribution.remove();
    } catch (error) {
      (faults ??= []).push({ contribution, error });
    }
  }
  return {
    ok: false,
    reason,
    failure,
    unclean: threw || faults !== undefined,
    faults: faults ?? [],
  };
}

// The fast check that runs for every contribution; the descriptive one runs only on failure.
function withinBound(
  bound: CapabilityBound | undefined,
  kind: CapabilityKind,
  contribution: Contribution,
  point: PhaseHookPoint | undefined,
): boolean {
  if (bound === undefined) return false;
  if (point !== undefined && !(bound.phaseHooks?.includes(point) ?? false)) return false;
  // An `any` axis admits whatever ids the contribution has, so they are not read: a registry
  // may build its `ids` on each read (measured: bench/runtime_bench.ts, whose plugins have open
  // bounds).
  if (kind === "hook") return true;
  if (kind === "provider") {
    if (bound.flavors?.kind === "any" && bound.presets?.kind === "any") return true;
  } else if (bound[axisOf(kind, "")]?.kind === "any") return true;
  const ids = contribution.ids;
  for (let i = 0; i < ids.length; i++) {
    if (!admits(bound[axisOf(kind, ids[i])], boundId(kind, ids[i]))) return false;
  }
  return true;
}

function label(capability: Capability): string {
  return `capability '${capability.name}' (${capability.kind})`;
}

// The union of capability kinds is closed; a plugin written in JavaScript can still hand over
// anything, so the shape is checked before a registry sees it.
function checkShape(capabilities: readonly Capability[]): string | undefined {
  if (!Array.isArray(capabilities)) return "capabilities() must return an array";
  for (let i = 0; i < capabilities.length; i++) {
    const capability = capabilities[i] as Partial<Capability> | null;
    if (capability === null || typeof capability !== "object") {
      return `capability #${i + 1} is not an object`;
    }
    const name = capability.name;
    if (typeof name !== "string" || name === "") return `capability #${i + 1} has no name`;
    if (!KINDS.has(capability.kind as string)) {
      return `capability '${name}' has unknown kind '${String(capability.kind)}' (kinds: ${
        CAPABILITY_KINDS.join(", ")
      })`;
    }
    // A plugin declares a handful of capabilities: a pairwise scan beats building a Set. The
    // names are compared from a list of strings, since reading `name` again from capabilities of
    // eight shapes is a megamorphic load each time (measured: the cycle of
    // bench/runtime_bench.ts spent more here than in any registry but one).
    for (let j = 0; j < i; j++) {
      if (names[j] === name) return `capability name '${name}' is used twice in the plugin`;
    }
    names[i] = name;
  }
  return undefined;
}

// The names checkShape compares, reused from call to call (it never re-enters itself).
const names: string[] = [];
