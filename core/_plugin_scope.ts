// One activation of one plugin, as the plugin sees it: the context `initialize` receives, the
// services its capability factories receive, and its view of the event bus, all one object. A
// thousand activations then cost a thousand small objects, not ten thousand closures.
//
// Whatever the scope hands out of what others own is a read-only view (see `read_only.ts` and
// `_plugin_views.ts`): the tools, the configuration and the plugin's own section, the workspace,
// the host's services and every event payload. The scope itself and its class are frozen, so a
// plugin cannot re-point its id or replace a method every other plugin's scope shares.

import type { Contribution } from "./contribution.ts";
import type { AmberConfig } from "./config.ts";
import { PluginFaultError } from "./errors.ts";
import type { EventBus } from "./event_bus.ts";
import type {
  AmberEvents,
  EventHandler,
  EventInterceptor,
  InterceptableEvent,
  PluginEvents,
  Subscription,
} from "./events.ts";
import type { PluginLedger } from "./ledger.ts";
import { hostServicesView, toolViewOf } from "./_plugin_views.ts";
import { readOnlyView, sealedCopy } from "./read_only.ts";
import type { HostServices, PluginContext, PluginServices, Workspace } from "./services.ts";
import type { ToolView } from "./tool.ts";

/** What a scope needs of its runtime; one per runtime, shared by every scope. */
export interface ScopeHost {
  readonly bus: EventBus;
  readonly ledger: PluginLedger;
  readonly tools: ToolView;
  config(): AmberConfig;
  section(pluginId: string): unknown;
  hostServices(): HostServices;
  workspace(): Workspace;
  report(pluginId: string, where: string, message: string, error?: unknown): void;
}

const INERT: Subscription = Object.freeze({ unsubscribe: () => {} });
// A plugin's handlers get each payload sealed (a frozen copy, nested objects as read-only views),
// so one cannot change what the next one, or the host, goes on to use. The last payload's copy
// is kept, so the handlers of every plugin on one publish share one copy; the bus itself is left
// as it is, its cost for the host's own handlers unchanged. Publishers make a new payload per
// event, as the kernel does.
let lastEvent: unknown;
let lastSealed: unknown;
function sealedEvent<T>(event: T): T {
  if (event !== lastEvent) {
    lastSealed = sealedCopy(event);
    lastEvent = event;
  }
  return lastSealed as T;
}

/** A plugin's scope for one activation; `close()` makes it refuse new subscriptions. */
export class PluginScope implements PluginContext, PluginServices, PluginEvents {
  readonly #host: ScopeHost;
  #open = true;
  // The host's services as this plugin sees them, remade only when the host attaches new ones.
  #services: HostServices | undefined = undefined;
  #servicesView: HostServices | undefined = undefined;

  constructor(readonly pluginId: string, host: ScopeHost) {
    this.#host = host;
    Object.freeze(this);
  }

  get owner(): string {
    return this.pluginId;
  }

  get events(): PluginEvents {
    return this;
  }

  get tools(): ToolView {
    return toolViewOf(this.#host.tools);
  }

  get host(): HostServices {
    const services = this.#host.hostServices();
    if (services !== this.#services || this.#servicesView === undefined) {
      this.#services = services;
      this.#servicesView = hostServicesView(services);
    }
    return this.#servicesView;
  }

  get workspace(): Workspace {
    return readOnlyView(this.#host.workspace());
  }

  config(): AmberConfig {
    return readOnlyView(this.#host.config());
  }

  section(): unknown {
    return readOnlyView(this.#host.section(this.pluginId));
  }

  close(): void {
    this.#open = false;
  }

  subscribe<K extends keyof AmberEvents>(
    type: K,
    handler: EventHandler<AmberEvents[K]>,
  ): Subscription {
    const wrapped = this.#guard(type, handler);
    if (wrapped === undefined) return INERT;
    return this.#ledgered(type, this.#host.bus.subscribe(type, wrapped));
  }

  intercept<K extends InterceptableEvent>(
    type: K,
    interceptor: EventInterceptor<AmberEvents[K]>,
  ): Subscription {
    const wrapped = this.#guard(type, interceptor);
    if (wrapped === undefined) return INERT;
    return this.#ledgered(type, this.#host.bus.intercept(type, wrapped));
  }

  // A plugin's handler that throws is reported against the plugin, and delivery goes on.
  #guard<T>(
    type: keyof AmberEvents,
    fn: (event: T) => unknown,
  ): ((event: T) => boolean | undefined) | undefined {
    const host = this.#host;
    const id = this.pluginId;
    if (!this.#open) {
      host.report(id, `event ${type}`, "subscribed after it was switched off; ignored");
      return undefined;
    }
    return (event: T): boolean | undefined => {
      try {
        return fn(sealedEvent(event)) === false ? false : undefined;
      } catch (error) {
        const fault = new PluginFaultError(id, `event ${type}`, error);
        host.report(id, fault.where, fault.message, error);
        return undefined;
      }
    };
  }

  #ledgered(type: keyof AmberEvents, inner: Subscription): Subscription {
    const ledger = this.#host.ledger;
    const id = this.pluginId;
    const contribution: Contribution = {
      kind: "subscription",
      name: `event:${type}`,
      ids: [type],
      remove: () => inner.unsubscribe(),
    };
    ledger.record(id, contribution);
    return {
      unsubscribe: () => {
        inner.unsubscribe();
        ledger.forget(id, contribution);
      },
    };
  }
}

// Every scope shares these methods: a plugin must not be able to replace them for the others.
Object.freeze(PluginScope.prototype);
