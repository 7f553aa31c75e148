// A scripted model and a one-plugin-per-capability-list runtime for the kernel's boundary tests:
// no HTTP, so each test says exactly which tool calls the model makes, turn by turn.

import type {
  AmberConfig,
  Capability,
  ChatRequest,
  Message,
  PluginRuntime,
  StreamSink,
  Tool,
} from "@amber/core";
import type { ModelPort, RunOptions } from "@amber/core/kernel";
import { makePlugin, makeRuntime } from "../_helpers.ts";

/** One model turn: tool calls (name and arguments), or text. */
export type Turn =
  | { readonly calls: readonly { readonly name: string; readonly args?: unknown }[] }
  | { readonly text: string };

/** A model that answers each request with the next turn, and remembers the requests. */
export class ScriptedModel implements ModelPort {
  readonly requests: ChatRequest[] = [];
  #turns: Turn[];
  #next = 0;

  constructor(turns: readonly Turn[]) {
    this.#turns = [...turns];
  }

  stream(request: ChatRequest, sink: StreamSink) {
    this.requests.push(structuredClone(request));
    const turn = this.#turns[this.#next++] ?? { text: "(no more turns)" };
    if ("text" in turn) sink({ type: "text", delta: turn.text });
    else {
      turn.calls.forEach((call, i) =>
        sink({
          type: "toolCallEnd",
          index: i,
          id: `call_${this.#next}_${i}`,
          name: call.name,
          arguments: JSON.stringify(call.args ?? {}),
        })
      );
    }
    sink({ type: "finish", reason: "text" in turn ? "stop" : "tool_calls" });
    return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
  }
}

/** A tool whose every run is counted in `ran`. */
export function countingTool(name: string, ran: string[], extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `The ${name} tool.`,
    parameters: { type: "object" },
    execute: () => {
      ran.push(name);
      return { ok: true, output: `${name} ran` };
    },
    ...extra,
  };
}

/** A started runtime with one plugin per entry of `plugins` (id to capabilities). */
export async function startRuntime(
  plugins: Record<string, readonly Capability[]>,
  config: AmberConfig = { plugins: {} },
): Promise<{ runtime: PluginRuntime; diagnostics: string[] }> {
  const diagnostics: string[] = [];
  const { runtime } = makeRuntime({
    config,
    onDiagnostic: (d) => diagnostics.push(`${d.pluginId}: ${d.where}: ${d.message}`),
  });
  for (const [id, capabilities] of Object.entries(plugins)) {
    runtime.register(makePlugin(id, capabilities));
  }
  await runtime.start();
  return { runtime, diagnostics };
}

/** The options of a run over `runtime` and `model` with the auto policy. */
export function runOptions(runtime: PluginRuntime, model: ModelPort): RunOptions {
  return { runtime, model, modelName: "m", prompt: "go", approval: "auto" };
}

/** The tool results of a conversation, as the model saw them. */
export function toolResults(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => m.role === "tool" ? [m.content] : []);
}
