// A plugin "process" in memory for the stand-in plugin's tests: `servePlugin` on one end of two
// streams, the host's `PluginConnection` on the other, with the verdicts a real process gives
// (a deadline kills, garbage kills, a crash ends it). A kill cuts both directions, so the
// plugin's side stops hearing the host as a killed process would. Every message the host sends
// is recorded, so a test can see what crossed.

import type { CallOptions, ConnectionEnd, PluginConnection } from "@amber/core/sandbox";
import { RpcPeer, servePlugin } from "@amber/core/sandbox";
import { DeadlineError } from "@amber/core";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One in-memory plugin process. */
export class MemoryConnection implements PluginConnection {
  readonly peer: RpcPeer;
  readonly ended: Promise<ConnectionEnd>;
  /** The method of every message the host sent, in order (responses as "response"). */
  readonly sent: string[] = [];
  /** The params of every notification the host sent, by method. */
  readonly notified: { method: string; params: unknown }[] = [];
  readonly #end: (end: ConnectionEnd) => void;
  readonly #cut: (() => void)[] = [];
  #toHost!: TransformStreamDefaultController<Uint8Array>;
  #verdict: ConnectionEnd | undefined;

  constructor(plugin: unknown) {
    const { promise, resolve } = Promise.withResolvers<ConnectionEnd>();
    this.ended = promise;
    this.#end = resolve;
    // plugin -> host, through a gate the test can cut or write garbage into.
    const up = new TransformStream<Uint8Array, Uint8Array>();
    const gate = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        this.#toHost = controller;
      },
    });
    up.readable.pipeTo(gate.writable).catch(() => {});
    // host -> plugin, recorded.
    const down = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        for (const line of decoder.decode(chunk).split("\n")) {
          if (line === "") continue;
          const message = JSON.parse(line);
          this.sent.push(message.method ?? "response");
          if (message.method !== undefined && message.id === undefined) {
            this.notified.push({ method: message.method, params: message.params });
          }
        }
        controller.enqueue(chunk);
      },
    });
    const toPlugin = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        this.#cut.push(() => controller.terminate());
      },
    });
    down.readable.pipeTo(toPlugin.writable).catch(() => {});
    this.#cut.push(() => this.#toHost.terminate());
    const child = new RpcPeer({ input: toPlugin.readable, output: up.writable });
    servePlugin(plugin, child).catch(() => {});
    this.peer = new RpcPeer({
      input: gate.readable,
      output: down.writable,
      onProtocolError: (error) =>
        this.kill(`it wrote to stdout what is not the protocol: '${error.line}'`),
    });
    this.peer.closed.then(() =>
      this.#finish({ reason: "its process exited with code 0", expected: false })
    );
  }

  call<T>(method: string, params: unknown, options: CallOptions): Promise<T> {
    const { deadlineMs, what } = options;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill(`its process was killed: ${what} did not answer within ${deadlineMs} ms`);
        reject(new DeadlineError(what, deadlineMs));
      }, deadlineMs);
    });
    const answer = this.peer.request<T>(method, params, {
      signal: options.signal,
      onProgress: options.onProgress,
    });
    return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
  }

  async stop(): Promise<void> {
    this.#verdict ??= { reason: "its process was stopped", expected: true };
    await this.peer.close();
    this.#cutAll();
    await this.ended;
  }

  kill(reason: string): void {
    this.#verdict ??= { reason, expected: false };
    this.#cutAll();
  }

  /** The process "crashes": it ends with `reason`, not by the host's hand. */
  crash(reason: string): void {
    this.kill(reason);
  }

  /** The plugin "prints" `text` to its stdout. */
  print(text: string): void {
    this.#toHost.enqueue(encoder.encode(`${text}\n`));
  }

  #cutAll(): void {
    for (const cut of this.#cut.splice(0)) {
      try {
        cut();
      } catch {
        // Already closed.
      }
    }
  }

  #finish(end: ConnectionEnd): void {
    this.#end(this.#verdict ?? end);
  }
}

/** A `connect` that serves `plugin` anew each time, keeping every connection it made. */
export function memoryProcesses(plugin: () => unknown): {
  readonly connect: () => MemoryConnection;
  readonly made: MemoryConnection[];
} {
  const made: MemoryConnection[] = [];
  return {
    connect: () => {
      const connection = new MemoryConnection(plugin());
      made.push(connection);
      return connection;
    },
    made,
  };
}
