// Prompt blocks, status segments and panels of a sandboxed plugin. A render in the host is
// synchronous and cannot wait for a process, so each shows the last text the plugin pushed
// (`prompt.update`, `status.update`, `panel.update`), starting from the text its descriptor
// carried. What a render depends on travels the other way as notifications: the snapshot a
// segment is asked to render (`status.snapshot`, sent once per new snapshot, not once per
// segment), the width a panel is shown at (`panel.width`), and the keys it gets (`panel.key`).

import type { PanelCapability } from "../panel.ts";
import type { PromptBlockCapability } from "../prompt.ts";
import type { StatusSegmentCapability, StatusSnapshot, StatusText } from "../status.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import type { RpcPeer } from "./json_rpc.ts";
import {
  type CapabilityDescriptor,
  Method,
  PANEL_WIDTH,
  type PanelUpdateParams,
  type PromptUpdateParams,
  type StatusUpdateParams,
} from "./protocol.ts";

type Descriptor<K extends CapabilityDescriptor["kind"]> = Extract<
  CapabilityDescriptor,
  { readonly kind: K }
>;

interface PanelState {
  // The width the host last showed it at, which the plugin was told.
  shownAt: number;
  lines: readonly string[];
}

/** The last renders a plugin pushed, and what the host last told it renders depend on. */
export class RenderBoard {
  readonly #prompts = new Map<string, string>();
  readonly #statuses = new Map<string, StatusText>();
  readonly #panels = new Map<string, PanelState>();
  #snapshot: StatusSnapshot | undefined;

  /** Starts over from the renders `descriptors` carry (a new activation or a live change). */
  reset(descriptors: readonly CapabilityDescriptor[]): void {
    this.#prompts.clear();
    this.#statuses.clear();
    const panels = new Map(this.#panels);
    this.#panels.clear();
    for (const descriptor of descriptors) {
      if (descriptor.kind === "prompt") this.#prompts.set(descriptor.name, descriptor.text);
      else if (descriptor.kind === "status") this.#statuses.set(descriptor.name, descriptor.text);
      else if (descriptor.kind === "panel") {
        // The plugin rendered it at PANEL_WIDTH first; a live change keeps the width it knows.
        const before = panels.get(descriptor.id);
        this.#panels.set(descriptor.id, {
          shownAt: before?.shownAt ?? PANEL_WIDTH,
          lines: descriptor.lines,
        });
      }
    }
  }

  /** Forgets what the plugin was told: a new process knows nothing yet. */
  forget(): void {
    this.#snapshot = undefined;
    this.#panels.clear();
  }

  /** Takes the plugin's pushes from `peer`; one that is not well formed is ignored. */
  listen(peer: RpcPeer): void {
    peer.onNotification(Method.promptUpdate, (params) => {
      const { name, text } = (params ?? {}) as Partial<PromptUpdateParams>;
      if (typeof name === "string" && typeof text === "string") this.#prompts.set(name, text);
    });
    peer.onNotification(Method.statusUpdate, (params) => {
      const { name, text } = (params ?? {}) as Partial<StatusUpdateParams>;
      if (typeof name === "string" && isStatusText(text)) {
        this.#statuses.set(name, { text: text.text, tone: text.tone });
      }
    });
    peer.onNotification(Method.panelUpdate, (params) => {
      const { id, lines } = (params ?? {}) as Partial<PanelUpdateParams>;
      const panel = typeof id === "string" ? this.#panels.get(id) : undefined;
      if (panel !== undefined && Array.isArray(lines)) {
        panel.lines = Object.freeze(lines.map((line) => String(line)));
      }
    });
  }

  /** A prompt block that shows the plugin's last text for it. */
  prompt(descriptor: Descriptor<"prompt">): PromptBlockCapability {
    const { name, priority } = descriptor;
    return { kind: "prompt", name, priority, render: () => this.#prompts.get(name) ?? "" };
  }

  /**
   * A status segment that shows the plugin's last render of it, and tells the plugin of a
   * snapshot it has not seen yet (the next frame shows what it renders from it).
   */
  status(descriptor: Descriptor<"status">, link: ProxyLink): StatusSegmentCapability {
    const { name, priority, dropPriority } = descriptor;
    return {
      kind: "status",
      name,
      priority,
      dropPriority,
      render: (snapshot) => {
        if (snapshot !== this.#snapshot) {
          if (this.#snapshot === undefined || !sameSnapshot(snapshot, this.#snapshot)) {
            link.notify(Method.statusSnapshot, { snapshot });
          }
          this.#snapshot = snapshot;
        }
        return this.#statuses.get(name) ?? { text: "", tone: "dim" };
      },
    };
  }

  /**
   * A panel that shows the plugin's last lines for it, tells the plugin the width it is shown
   * at when that changes, and sends it the keys it gets when it takes keys.
   */
  panel(descriptor: Descriptor<"panel">, link: ProxyLink): PanelCapability {
    const { name, id, title } = descriptor;
    const panel: { -readonly [K in keyof PanelCapability]: PanelCapability[K] } = {
      kind: "panel",
      name,
      id,
      title,
      lines: (width) => {
        const state = this.#panels.get(id);
        if (state === undefined) return [];
        if (state.shownAt !== width) {
          state.shownAt = width;
          link.notify(Method.panelWidth, { id, width });
        }
        return state.lines;
      },
    };
    if (descriptor.keys) {
      panel.onKey = (key) => {
        link.notify(Method.panelKey, { id, key });
        return true;
      };
    }
    return panel;
  }
}

function isStatusText(value: unknown): value is StatusText {
  if (typeof value !== "object" || value === null) return false;
  const { text, tone } = value as { text?: unknown; tone?: unknown };
  return typeof text === "string" && typeof tone === "string";
}

// Hosts build a new snapshot for every frame; most frames change nothing the plugin would see.
function sameSnapshot(a: StatusSnapshot, b: StatusSnapshot): boolean {
  for (const key in a) {
    const field = key as keyof StatusSnapshot;
    if (field === "mcpServers") continue;
    if (a[field] !== b[field]) return false;
  }
  const servers = a.mcpServers;
  const before = b.mcpServers;
  if (servers === before) return true;
  if (servers.length !== before.length) return false;
  return servers.every((server, i) =>
    server.name === before[i].name && server.connected === before[i].connected &&
    server.tools === before[i].tools
  );
}
