// The renders of a sandboxed plugin, kept in its process. A render in the host is synchronous
// and cannot wait for a process, so the plugin process renders its prompt blocks, status segments
// and panels after every message it handled, from the last status snapshot and panel widths the
// host sent, and pushes only what changed. A render that throws (or returns what is not a
// render) keeps the last text and is logged, as the host's registries keep a bar intact.

import type { PanelCapability } from "../panel.ts";
import type { PromptBlockCapability } from "../prompt.ts";
import {
  emptyStatusSnapshot,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type StatusText,
} from "../status.ts";
import { deepFreeze } from "../read_only.ts";
import { Method, PANEL_WIDTH } from "./protocol.ts";
import { messageOf } from "../_message_of.ts";

/** Where renders go: the host's notifications, and the log. */
export interface RenderSink {
  /** Sends a notification to the host. */
  notify(method: string, params: unknown): void;
  /** Writes a line to the plugin's log. */
  log(level: string, message: string): void;
}

interface Tracked<C, T> {
  readonly capability: C;
  last: T;
}

const HIDDEN: StatusText = Object.freeze({ text: "", tone: "dim" });
const TONES = new Set(["dim", "good", "warn", "crit", "accent", "banner"]);

/** The plugin's render-bearing capabilities and what the host was last sent of each. */
export class Renders {
  readonly #sink: RenderSink;
  #snapshot: StatusSnapshot = deepFreeze(emptyStatusSnapshot());
  readonly #widths = new Map<string, number>();
  #prompts: Tracked<PromptBlockCapability, string>[] = [];
  #statuses: Tracked<StatusSegmentCapability, StatusText>[] = [];
  #panels = new Map<string, Tracked<PanelCapability, readonly string[]>>();

  constructor(sink: RenderSink) {
    this.#sink = sink;
  }

  /** Forgets every tracked capability: a live plugin's contributions are being resolved anew. */
  clear(): void {
    this.#prompts = [];
    this.#statuses = [];
    this.#panels = new Map();
  }

  /** Tracks a prompt block; returns its text now. */
  prompt(capability: PromptBlockCapability): string {
    const text = this.#promptText(capability, "");
    this.#prompts.push({ capability, last: text });
    return text;
  }

  /** Tracks a status segment; returns its render of the last snapshot. */
  status(capability: StatusSegmentCapability): StatusText {
    const text = this.#statusText(capability, HIDDEN);
    this.#statuses.push({ capability, last: text });
    return text;
  }

  /** Tracks a panel; returns its lines at its width. */
  panel(capability: PanelCapability): readonly string[] {
    const lines = this.#panelLines(capability, []);
    this.#panels.set(capability.id, { capability, last: lines });
    return lines;
  }

  /** The panel called `id`, if the plugin has it. */
  panelOf(id: string): PanelCapability | undefined {
    return this.#panels.get(id)?.capability;
  }

  /** Status segments render from `snapshot` from now on. */
  setSnapshot(snapshot: StatusSnapshot): void {
    this.#snapshot = deepFreeze(snapshot);
  }

  /** Panel `id` is shown `width` cells wide from now on. */
  setWidth(id: string, width: number): void {
    this.#widths.set(id, width);
  }

  /** Renders everything again and sends the host what changed since it was last sent. */
  push(): void {
    for (const tracked of this.#prompts) {
      const text = this.#promptText(tracked.capability, tracked.last);
      if (text === tracked.last) continue;
      tracked.last = text;
      this.#sink.notify(Method.promptUpdate, { name: tracked.capability.name, text });
    }
    for (const tracked of this.#statuses) {
      const text = this.#statusText(tracked.capability, tracked.last);
      if (text.text === tracked.last.text && text.tone === tracked.last.tone) continue;
      tracked.last = text;
      this.#sink.notify(Method.statusUpdate, { name: tracked.capability.name, text });
    }
    for (const tracked of this.#panels.values()) {
      const lines = this.#panelLines(tracked.capability, tracked.last);
      if (sameLines(lines, tracked.last)) continue;
      tracked.last = lines;
      const id = tracked.capability.id;
      this.#sink.notify(Method.panelUpdate, { id, width: this.#width(id), lines });
    }
  }

  #width(id: string): number {
    return this.#widths.get(id) ?? PANEL_WIDTH;
  }

  #promptText(capability: PromptBlockCapability, last: string): string {
    try {
      const text: unknown = capability.render();
      if (typeof text === "string") return text;
      this.#failed("prompt block", capability.name, `render returned ${typeof text}, not text`);
    } catch (error) {
      this.#failed("prompt block", capability.name, messageOf(error));
    }
    return last;
  }

  #statusText(capability: StatusSegmentCapability, last: StatusText): StatusText {
    try {
      const text: unknown = capability.render(this.#snapshot);
      if (isStatusText(text)) return { text: text.text, tone: text.tone };
      this.#failed("status segment", capability.name, "render returned no {text, tone}");
    } catch (error) {
      this.#failed("status segment", capability.name, messageOf(error));
    }
    return last;
  }

  #panelLines(capability: PanelCapability, last: readonly string[]): readonly string[] {
    try {
      const lines: unknown = capability.lines(this.#width(capability.id));
      if (Array.isArray(lines) && lines.every((line) => typeof line === "string")) {
        return [...lines];
      }
      this.#failed("panel", capability.id, "lines returned what is not a list of strings");
    } catch (error) {
      this.#failed("panel", capability.id, messageOf(error));
    }
    return last;
  }

  #failed(what: string, name: string, why: string): void {
    this.#sink.log("error", `${what} '${name}' failed to render, the last text stays: ${why}`);
  }
}

function isStatusText(value: unknown): value is StatusText {
  const text = value as StatusText | null;
  return typeof text === "object" && text !== null && typeof text.text === "string" &&
    TONES.has(text.tone);
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
