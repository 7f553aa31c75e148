/**
 * The status registry: the segments of the status bar, who owns each, and the composition of the
 * bar for a terminal of a given width.
 *
 * Composition is on the host's frame path, so it does as little as it can: the two orders it
 * needs (left to right, and what to drop first) are sorted once per registry change, widths are
 * measured in terminal cells with an ASCII fast path, and a segment whose render throws costs one
 * report, not one per frame.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStatusRegistry } from "@amber/registries/status";
 * import { emptyStatusSnapshot, EventBus } from "@amber/core";
 *
 * const status = createStatusRegistry();
 * const services = {
 *   owner: "clock",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * status.install("clock", {
 *   kind: "status",
 *   name: "model",
 *   priority: 100,
 *   dropPriority: 90,
 *   render: (snapshot) => ({ text: snapshot.model, tone: "accent" }),
 * }, services);
 * const bar = status.compose(80, { ...emptyStatusSnapshot(), model: "gpt-5" });
 * assert.equal(bar.text, "gpt-5");
 * ```
 *
 * @module
 */

import {
  type ComposedSegment,
  type ComposedStatus,
  failed,
  installed,
  type InstallResult,
  type PluginServices,
  type RegistryEntry,
  sealedCopy,
  type StatusRegistry,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type StatusTone,
} from "@amber/core";
import { cellWidth, truncateToCells } from "@amber/core/cells";
import { OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

/**
 * Options of {@linkcode createStatusRegistry}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStatusRegistry, type StatusRegistryOptions } from "@amber/registries/status";
 * import { emptyStatusSnapshot, EventBus } from "@amber/core";
 *
 * const reported: string[] = [];
 * const options: StatusRegistryOptions = {
 *   onError: (owner, name, error) => reported.push(`${owner}/${name}: ${error}`),
 * };
 * const status = createStatusRegistry(options);
 * const services = {
 *   owner: "p",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * status.install("p", {
 *   kind: "status",
 *   name: "clock",
 *   priority: 100,
 *   dropPriority: 50,
 *   render: () => {
 *     throw new Error("no clock");
 *   },
 * }, services);
 * assert.equal(status.compose(80, emptyStatusSnapshot()).text, "");
 * status.compose(80, emptyStatusSnapshot());
 * assert.deepEqual(reported, ["p/clock: Error: no clock"]); // once, not once per render
 * ```
 */
export interface StatusRegistryOptions {
  /**
   * Told when a segment's render throws or returns something that is not a `StatusText`: once,
   * until that segment renders fine again.
   */
  onError?(owner: string, name: string, error: unknown): void;
}

/** What sits between two segments of the bar. */
const SEPARATOR = " │ ";
// Measured at the first bar composed, not at import: the box-drawing character is outside ASCII,
// so measuring it builds the width tables, which a command that shows no bar never needs.
let separatorWidth: number | undefined;
const TONES: ReadonlySet<string> = new Set<StatusTone>([
  "dim",
  "good",
  "warn",
  "crit",
  "accent",
  "banner",
]);
const NO_NAMES: readonly string[] = Object.freeze([]);
// A line break would split the bar, an escape would restyle the terminal: neither belongs in it.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LINE_BREAKS = /[\t\n\v\f\r]+/g;
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

interface Slot {
  readonly capability: StatusSegmentCapability;
  // Scratch state of the composition in progress, kept on the slot to avoid a map per frame.
  text: string;
  tone: StatusTone;
  width: number;
  shown: boolean;
  faulted: boolean;
}

type Entry = OwnedRecord<Slot>;

function byPosition(a: Entry, b: Entry): number {
  return a.value.capability.priority - b.value.capability.priority || a.seq - b.seq;
}

function byDropOrder(a: Entry, b: Entry): number {
  return a.value.capability.dropPriority - b.value.capability.dropPriority || b.seq - a.seq;
}

function clean(text: string): string {
  return CONTROL.test(text) ? text.replace(LINE_BREAKS, " ").replace(CONTROLS, "").trim() : text;
}

function problem(capability: StatusSegmentCapability): string | undefined {
  if (typeof capability !== "object" || capability === null) return "is not an object";
  if (capability.kind !== "status") return `has kind '${String(capability.kind)}', not 'status'`;
  if (typeof capability.name !== "string" || capability.name.trim() === "") {
    return "has no name";
  }
  if (typeof capability.priority !== "number" || !Number.isFinite(capability.priority)) {
    return "has a priority that is not a finite number";
  }
  if (typeof capability.dropPriority !== "number" || !Number.isFinite(capability.dropPriority)) {
    return "has a dropPriority that is not a finite number";
  }
  if (typeof capability.render !== "function") return "has no render function";
  return undefined;
}

/**
 * Creates a status registry.
 *
 * Segment names are unique across the harness: installing a name that is taken fails and names
 * both plugins. `compose(width, snapshot)` renders every segment and lays the visible ones out
 * left to right in (priority, registration) order, joined by ` │ `; a segment rendering empty
 * text is hidden. Width is counted in terminal cells (CJK and emoji take two). When the bar is
 * wider than `width`, segments are dropped one at a time, the LOWEST `dropPriority` first (so a
 * high drop priority means "keep me longest"), and among equal drop priorities the one registered
 * later goes first, until the bar fits; `dropped` lists them in the order they were dropped. If
 * the one segment left still does not fit, it is cut to `width` cells ending in `…`. A render
 * that throws, or returns something other than a `StatusText`, shows nothing and is reported
 * through `onError` once, until the segment renders fine again. Text is kept on one line: in a
 * text holding control characters, tabs and line breaks become a space, the other controls are
 * removed, and the result is trimmed. `entries()` lists the segments in registration order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createStatusRegistry } from "@amber/registries/status";
 * import { emptyStatusSnapshot, EventBus, type PluginServices } from "@amber/core";
 *
 * const services: PluginServices = {
 *   owner: "demo",
 *   tools: { get: () => undefined, list: () => [] },
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const status = createStatusRegistry();
 * status.install("demo", {
 *   kind: "status",
 *   name: "model",
 *   priority: 100,
 *   dropPriority: 90,
 *   render: () => ({ text: "gpt-5", tone: "accent" }),
 * }, services);
 * status.install("demo", {
 *   kind: "status",
 *   name: "tokens",
 *   priority: 200,
 *   dropPriority: 10,
 *   render: () => ({ text: "1200 tok", tone: "dim" }),
 * }, services);
 * assert.equal(status.compose(80, emptyStatusSnapshot()).text, "gpt-5 │ 1200 tok");
 * const narrow = status.compose(10, emptyStatusSnapshot());
 * assert.equal(narrow.text, "gpt-5");
 * assert.deepEqual(narrow.dropped, ["tokens"]);
 * ```
 */
export function createStatusRegistry(options: StatusRegistryOptions = {}): StatusRegistry {
  const segments = new OwnedMap<Slot>();
  const onError = options.onError;
  let orderVersion = -1;
  let position: readonly Entry[] = [];
  let dropOrder: readonly Entry[] = [];

  function report(record: Entry, error: unknown): void {
    const slot = record.value;
    if (slot.faulted) return;
    slot.faulted = true;
    if (onError === undefined) return;
    try {
      onError(record.owner, record.id, error);
    } catch {
      // The host's reporter failing must not take the status bar down with it.
    }
  }

  function render(record: Entry, snapshot: StatusSnapshot): void {
    const slot = record.value;
    slot.shown = false;
    let result: unknown;
    try {
      result = slot.capability.render(snapshot);
    } catch (error) {
      report(record, error);
      return;
    }
    const text = typeof result === "object" && result !== null
      ? (result as { text?: unknown }).text
      : undefined;
    if (typeof text !== "string") {
      report(record, new TypeError(`render returned ${describe(result)}, not a StatusText`));
      return;
    }
    slot.faulted = false;
    const tone = (result as { tone?: unknown }).tone;
    slot.tone = typeof tone === "string" && TONES.has(tone) ? tone as StatusTone : "dim";
    if (text === "") return;
    slot.text = clean(text);
    if (slot.text === "") return;
    slot.width = cellWidth(slot.text);
    slot.shown = true;
  }

  function sortOrders(): void {
    if (orderVersion === segments.version) return;
    const records = segments.records();
    position = [...records].sort(byPosition);
    dropOrder = [...records].sort(byDropOrder);
    orderVersion = segments.version;
  }

  return {
    install(
      owner: string,
      capability: StatusSegmentCapability,
      _services: PluginServices,
    ): InstallResult {
      const fault = problem(capability);
      if (fault !== undefined) {
        const name = typeof capability?.name === "string" && capability.name.trim() !== ""
          ? ` '${capability.name}'`
          : "";
        return failed(`status segment${name} of ${ownerLabel(owner)} ${fault}`);
      }
      const name = capability.name;
      const holder = segments.get(name);
      if (holder !== undefined) {
        return failed(
          `status segment '${name}' of ${ownerLabel(owner)} is already registered by ` +
            ownerLabel(holder.owner),
          { id: name, owner: holder.owner },
        );
      }
      const handle = segments.install(
        name,
        owner,
        {
          capability,
          text: "",
          tone: "dim",
          width: 0,
          shown: false,
          faulted: false,
        },
        "status",
        name,
      )!;
      return installed(handle);
    },

    entries(): readonly RegistryEntry[] {
      return segments.entries();
    },

    purge(owner: string): readonly string[] {
      return segments.purge(owner);
    },

    get version(): number {
      return segments.version;
    },

    compose(width: number, snapshot: StatusSnapshot): ComposedStatus {
      sortOrders();
      // NaN and negative widths leave no room at all; Infinity means no limit.
      const limit = width > 0 ? Math.floor(width) : 0;
      let total = 0;
      let count = 0;
      // Every segment renders from the same snapshot, so each gets it sealed: one segment cannot
      // change what the next one, or the host, sees. A frozen copy rather than a view, since
      // segments read it at every frame.
      const seen = sealedCopy(snapshot);
      const gap = separatorWidth ??= cellWidth(SEPARATOR);
      for (const record of position) {
        render(record, seen);
        if (!record.value.shown) continue;
        total += record.value.width + (count > 0 ? gap : 0);
        count++;
      }
      let dropped: string[] | undefined;
      if (total > limit) {
        for (const record of dropOrder) {
          if (count === 1) break;
          const slot = record.value;
          if (!slot.shown) continue;
          slot.shown = false;
          (dropped ??= []).push(record.id);
          total -= slot.width + gap;
          count--;
          if (total <= limit) break;
        }
      }
      const shown: ComposedSegment[] = [];
      let text = "";
      for (const record of position) {
        const slot = record.value;
        if (!slot.shown) continue;
        let segmentText = slot.text;
        if (total > limit) {
          // Only one segment is left and even it is too wide.
          segmentText = truncateToCells(segmentText, limit);
          if (segmentText === "") {
            (dropped ??= []).push(record.id);
            continue;
          }
        }
        if (shown.length > 0) text += SEPARATOR;
        text += segmentText;
        shown.push({ name: record.id, text: segmentText, tone: slot.tone });
      }
      return { segments: shown, text, dropped: dropped ?? NO_NAMES };
    },
  };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  return typeof value === "object" ? "an object without a string text" : typeof value;
}
