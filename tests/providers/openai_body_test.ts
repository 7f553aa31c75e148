// The OpenAI dialects build each request from per-message JSON made once (issue 14, flat
// per-step cost). The bodies must stay byte for byte what they were: the golden bodies in
// fixtures/openai/varied_bodies.json were written by the dialects as they stood before the
// cache (JSON.stringify of the whole body), for the conversation in _openai_conversation.ts.

import assert from "node:assert/strict";
import type { ChatRequest, Message, SyncDialect } from "@amber/core";
import { openaiDialect } from "../../providers/openai.ts";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { CONVERSATION, conversationRequest, deepFrozen } from "./_openai_conversation.ts";

const GOLDEN: Record<string, string> = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/openai/varied_bodies.json", import.meta.url)),
);

const DIALECTS: readonly [string, () => SyncDialect][] = [
  ["chat", () => openaiDialect()],
  ["responses", () => openaiResponsesDialect()],
];

function bodyOf(dialect: SyncDialect, images: boolean, request: ChatRequest): string {
  return dialect.chatRequest({ baseUrl: "https://api.example/v1", images }, request).body!;
}

for (const [name, make] of DIALECTS) {
  Deno.test(`${name} body: a growing frozen conversation gives today's bytes at every step`, () => {
    const frozen = deepFrozen(structuredClone(CONVERSATION) as Message[]);
    for (const images of [false, true]) {
      // One dialect serves the whole session, with images switched in the middle of it.
      const dialect = make();
      for (let count = 1; count <= frozen.length; count++) {
        const warm = bodyOf(dialect, images, conversationRequest(frozen.slice(0, count)));
        const fresh = bodyOf(
          make(),
          images,
          conversationRequest(structuredClone(CONVERSATION.slice(0, count)) as Message[]),
        );
        assert.equal(warm, fresh, `${count} messages, images ${images}`);
        // The text is in JSON.stringify's own form: parsing and writing again changes nothing.
        assert.equal(JSON.stringify(JSON.parse(warm)), warm);
      }
      assert.equal(
        bodyOf(dialect, images, conversationRequest(frozen)),
        GOLDEN[`${name}_images_${images}`],
      );
      assert.equal(
        bodyOf(dialect, !images, conversationRequest(frozen)),
        GOLDEN[`${name}_images_${!images}`],
      );
    }
  });

  Deno.test(`${name} body: a frozen message is serialized once, an unfrozen one every time`, () => {
    let reads = 0;
    const counted = (content: string) => ({
      role: "user" as const,
      get content(): string {
        reads++;
        return content;
      },
    });
    const dialect = make();
    const frozen = Object.freeze(counted("frozen"));
    const history: Message[] = [frozen];
    bodyOf(dialect, false, conversationRequest(history));
    const once = reads;
    assert.ok(once > 0);
    for (let step = 0; step < 5; step++) {
      history.push(Object.freeze({ role: "assistant", content: `step ${step}` }));
      bodyOf(dialect, false, conversationRequest([...history]));
    }
    assert.equal(reads, once);

    const open = counted("open");
    bodyOf(dialect, false, conversationRequest([open]));
    const first = reads;
    bodyOf(dialect, false, conversationRequest([open]));
    assert.equal(reads - first, first - once);
  });

  Deno.test(`${name} body: the frozen tool list is serialized once`, () => {
    let reads = 0;
    const tool = Object.freeze({
      name: "read",
      get description(): string {
        reads++;
        return "Reads a file.";
      },
      parameters: { type: "object" },
    });
    const tools = Object.freeze([tool]);
    const dialect = make();
    const request = { ...conversationRequest([{ role: "user", content: "Hi" }]), tools };
    const first = bodyOf(dialect, false, request);
    assert.equal(bodyOf(dialect, false, request), first);
    assert.equal(reads, 1);
    assert.ok(first.includes('"description":"Reads a file."'));
  });
}

// A session as the kernel runs it, at random: the prompt's system block rebuilt (not frozen)
// every step, frozen messages committed, sometimes a message that is not frozen, reasoning with
// and without a recorded field, turns with and without tool calls, images, images switched on
// and off, and the history replaced (as compaction does). Every body must equal the one a fresh
// dialect builds from unfrozen copies.
for (const [name, make] of DIALECTS) {
  Deno.test(`${name} body: random sessions reuse the previous request's text, exactly`, () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
    for (let session = 0; session < 40; session++) {
      const dialect = make();
      let history: Message[] = [];
      let id = 0;
      for (let step = 0; step < 30; step++) {
        const roll = random();
        const added: Message[] = [];
        if (roll < 0.2) added.push({ role: "user", content: `u${step}` });
        else if (roll < 0.6) {
          const calls = random() < 0.6 ? [{ id: `c${++id}`, name: "read", arguments: "{}" }] : [];
          const field = pick([undefined, "reasoning_content", "reasoning"]);
          added.push({
            role: "assistant",
            content: calls.length > 0 && random() < 0.5 ? "" : `a${step}`,
            ...(random() < 0.7 ? { reasoning: `r${step}` } : {}),
            ...(field === undefined ? {} : { reasoningField: field }),
            ...(calls.length > 0 ? { toolCalls: calls } : {}),
          });
          for (const call of calls) {
            added.push({
              role: "tool",
              toolCallId: call.id,
              name: "read",
              content: `t${step}`,
              ...(random() < 0.3 ? { images: [{ mimeType: "image/png", data: "iVBO" }] } : {}),
            });
          }
        } else if (roll < 0.65) history = history.slice(Math.floor(history.length / 2));
        else if (roll < 0.7) added.push({ role: "system", content: `s${step}` });
        for (const message of added) history.push(random() < 0.9 ? deepFrozen(message) : message);
        const images = random() < 0.8;
        const messages = [{ role: "system" as const, content: "rules" }, ...history];
        const warm = bodyOf(dialect, images, conversationRequest(messages));
        const fresh = bodyOf(
          make(),
          images,
          conversationRequest(structuredClone(messages) as Message[]),
        );
        assert.equal(warm, fresh, `session ${session}, step ${step}`);
      }
    }
  });
}
