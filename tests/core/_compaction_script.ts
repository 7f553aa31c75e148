// What the compaction tests share: a long conversation that needs compacting, and a model that
// answers summary requests apart from the turns of the task (each queue in its own order).

import type { ChatRequest, Message, StreamEvent, StreamSink } from "@amber/core";
import type { ModelPort } from "@amber/core/kernel";

/** Whether a request is the default strategy's summary request. */
export function isSummaryRequest(request: ChatRequest): boolean {
  return request.tools.length === 0 &&
    request.messages[0]?.role === "system" &&
    request.messages[0].content.startsWith("You compact");
}

/** What the model answers one request with: stream events (a finish is added when missing). */
export type Answer = readonly StreamEvent[] | ((request: ChatRequest) => readonly StreamEvent[]);

/** A text answer. */
export const text = (delta: string): StreamEvent[] => [{ type: "text", delta }];

/** An answer calling one tool. */
export const calling = (name: string, args: unknown, id: string): StreamEvent[] => [
  { type: "toolCallEnd", index: 0, id, name, arguments: JSON.stringify(args) },
];

/** The provider's answer to a request too long for the window. */
export const overflow: StreamEvent[] = [{
  type: "error",
  message: "400: prompt is too long",
  retryable: false,
  status: 400,
  contextOverflow: true,
}];

/** A model with two queues: the task's turns, and the summaries. It records every request. */
export class TwoQueueModel implements ModelPort {
  readonly requests: ChatRequest[] = [];
  readonly summaryRequests: ChatRequest[] = [];
  #turns: Answer[];
  #summaries: Answer[];

  constructor(turns: readonly Answer[], summaries: readonly Answer[] = []) {
    this.#turns = [...turns];
    this.#summaries = [...summaries];
  }

  stream(request: ChatRequest, sink: StreamSink) {
    const summary = isSummaryRequest(request);
    (summary ? this.summaryRequests : this.requests).push(structuredClone(request));
    const answer = (summary ? this.#summaries : this.#turns).shift() ??
      text(summary ? "(no summary scripted)" : "(no turn scripted)");
    const events = typeof answer === "function" ? answer(request) : answer;
    for (const event of events) sink(event);
    if (!events.some((e) => e.type === "finish")) {
      const failed = events.some((e) => e.type === "error");
      const calls = events.some((e) => e.type === "toolCallEnd");
      sink({ type: "finish", reason: failed ? "error" : calls ? "tool_calls" : "stop" });
    }
    return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
  }
}

/**
 * A conversation of `turns` user turns, each reading a file of `size` characters: the kind of
 * history compaction is for.
 */
export function longHistory(turns: number, size = 4_000): Message[] {
  const messages: Message[] = [{ role: "system", content: "You are a coding agent." }];
  for (let i = 0; i < turns; i++) {
    messages.push(
      { role: "user", content: `Read src/file_${i}.ts` },
      {
        role: "assistant",
        content: "",
        toolCalls: [{
          id: `h${i}`,
          name: "read",
          arguments: JSON.stringify({ path: `src/file_${i}.ts` }),
        }],
      },
      {
        role: "tool",
        toolCallId: `h${i}`,
        name: "read",
        content: `// file ${i}\n`.padEnd(size, "x"),
      },
      { role: "assistant", content: `file_${i} holds fact ${i}.` },
    );
  }
  return messages;
}
