// The host's end of a plugin process, in memory, for the tests of the plugin process's side
// (core/sandbox/child.ts): two RpcPeers over TransformStreams, `servePlugin` on one end, and what
// the plugin pushed recorded on the other.

import assert from "node:assert/strict";
import type { Plugin } from "@amber/core";
import {
  type CapabilityDescriptor,
  type InitializeParams,
  type InitializeResult,
  Method,
  PROTOCOL_VERSION,
  RpcError,
  RpcPeer,
  servePlugin,
} from "@amber/core/sandbox";

/** One notification the plugin pushed. */
export interface Note {
  readonly method: string;
  readonly params: unknown;
}

const PUSHED = [
  Method.promptUpdate,
  Method.statusUpdate,
  Method.panelUpdate,
  Method.pluginChanged,
  Method.log,
  Method.uiNotify,
  Method.eventsSubscribe,
  Method.eventsUnsubscribe,
];

// The host's end, in memory: its peer, what the plugin pushed, and the serving's promise.
export function connect(plugin: unknown, source?: string) {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  const host = new RpcPeer({ input: down.readable, output: up.writable });
  const child = new RpcPeer({ input: up.readable, output: down.writable });
  const served = servePlugin(plugin, child, source === undefined ? {} : { source });
  const notes: Note[] = [];
  for (const method of PUSHED) {
    host.onNotification(method, (params) => notes.push({ method, params }));
  }
  const describe = () =>
    host.request(Method.describe, { protocolVersion: PROTOCOL_VERSION, hostVersion: "9.9.9" });
  return {
    host,
    notes,
    served,
    describe,
    // A request answered after every notification sent before it: what was pushed is in `notes`.
    flush: describe,
    pushed: (method: string) => notes.filter((note) => note.method === method).map((n) => n.params),
    async initialize(params: Partial<InitializeParams> = {}): Promise<InitializeResult> {
      await describe();
      return await host.request<InitializeResult>(Method.initialize, {
        pluginId: "sample",
        workspace: "/work/space",
        config: { plugins: { sample: {} } },
        section: {},
        tools: [],
        services: {},
        ...params,
      });
    },
    async close(): Promise<void> {
      await host.close();
      await served;
    },
  };
}

export function plugin(overrides: Partial<Plugin> = {}): Plugin {
  return {
    id: "sample",
    version: "1.0.0",
    name: "Sample",
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [],
    ...overrides,
  };
}

export function descriptors(result: InitializeResult): readonly CapabilityDescriptor[] {
  assert.ok(result.ok, `initialize failed: ${result.ok ? "" : result.reason}`);
  return result.capabilities;
}

export async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<RpcError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof RpcError, `expected an RpcError, got ${caught}`);
  assert.match(caught.message, pattern);
  return caught;
}
