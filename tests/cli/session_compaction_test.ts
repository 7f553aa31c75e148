// The agent session's side of long sessions, in-process against the fake provider: the model's
// figures from the catalog (config.yaml's `models:`, the shipped snapshot), each call priced on
// its usage event, the turn's and the session's dollars (kept across a resume, gone after a
// reset), `compact()` on request, and images sent only to a model the catalog says takes them.

import assert from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import type { ScriptedTurn } from "@amber/providers/testing";
import { type FakeSession, openFakeSession } from "./_fake_session.ts";

// The session under test: the fake provider on the OpenAI protocol, tools approved.
function open(
  turns: ScriptedTurn[],
  config: Record<string, unknown>,
  model = "fake-model",
): Promise<FakeSession> {
  return openFakeSession(turns, {
    config,
    model,
    provider: "openai",
    key: "sk-compaction-test",
    approval: "auto",
  });
}

const PRICED = { models: { "fake-model": { contextWindow: 50_000, input: 1, output: 4 } } };

Deno.test("a session prices every call, counts the turn's and the session's dollars, and learns the window", async () => {
  await using o = await open([
    { text: "One.", usage: { promptTokens: 1000, completionTokens: 100 } },
    { text: "Two.", usage: { promptTokens: 2000, completionTokens: 0 } },
  ], PRICED);
  const { session, events } = o;
  // Read through a function: each call is a new reading of the getters.
  const spent = () => [session.turnCost, session.cost];
  assert.deepEqual({ ...session.info }, { id: "fake-model", sources: [] });
  assert.deepEqual(spent(), [undefined, undefined]);

  await session.turn("first");
  assert.equal(session.info.contextWindow, 50_000);
  const usage = events.find((e) => e.type === "usage");
  assert.equal(usage?.type === "usage" && usage.cost, (1000 + 100 * 4) / 1e6);
  const request = events.find((e) => e.type === "request");
  assert.equal(request?.type === "request" && request.contextWindow, 50_000);
  assert.equal(session.turnCost, 0.0014);

  await session.turn("second");
  assert.equal(session.turnCost, 0.002);
  assert.equal(session.cost?.toFixed(4), "0.0034");
  const id = session.id!;

  session.reset();
  assert.deepEqual(spent(), [undefined, undefined]);
  // A resumed session's dollars are its file's.
  await session.resume(id);
  assert.deepEqual(spent().map((c) => c?.toFixed(4)), [undefined, "0.0034"]);
});

Deno.test("a model without prices has no cost, and its usage events no cost field", async () => {
  await using o = await open([{ text: "Hi.", usage: { promptTokens: 10, completionTokens: 1 } }], {
    models: { "fake-model": { contextWindow: 8000 } },
  });
  await o.session.turn("hello");
  assert.equal(o.session.cost, undefined);
  assert.equal(o.session.turnCost, undefined);
  const usage = o.events.find((e) => e.type === "usage");
  assert.ok(usage !== undefined && !("cost" in usage));
});

Deno.test("compact() says when there is nothing yet, and otherwise compacts as asked; the next turn goes on from it", async () => {
  await using o = await open([
    {
      text: `The first answer mentions src/a.ts. ${"More words on it. ".repeat(200)}`,
      usage: { promptTokens: 100, completionTokens: 10 },
    },
    { text: "The second answer.", usage: { promptTokens: 100, completionTokens: 10 } },
    { text: "SUMMARY: a.ts was discussed.", usage: { promptTokens: 500, completionTokens: 50 } },
    { text: "The third answer.", usage: { promptTokens: 100, completionTokens: 10 } },
  ], {
    // The prompt blocks and tools alone pass half this window, what the summary aims at; the
    // second turn would pass 85% of it, but `auto: false` leaves compacting to the user.
    models: { "fake-model": { contextWindow: 4000, input: 1, output: 4 } },
    compaction: { keepTurns: 1, auto: false },
  });
  const { session, server, events, configDir } = o;

  const nothing = await session.compact();
  assert.deepEqual(nothing, {
    compacted: false,
    tokensBefore: 0,
    tokensAfter: 0,
    message: "there is no conversation to compact yet",
  });
  assert.equal(session.id, undefined, "no session file was created");
  await assert.rejects(Deno.stat(`${configDir}/sessions`), Deno.errors.NotFound);

  await session.turn("first question");
  await session.turn("second question");
  assert.equal(events.some((e) => e.type === "compactionStarted"), false);
  const spent = session.cost!;
  const tokens = session.usage;
  const outcome = await session.compact("keep the file names");
  assert.equal(outcome.compacted, true, outcome.message);
  assert.equal(outcome.strategy, "default");
  assert.ok(outcome.tokensAfter < outcome.tokensBefore);
  const now = JSON.stringify(session.messages);
  assert.match(now, /SUMMARY: a\.ts was discussed\./);
  assert.doesNotMatch(now, /More words on it/);
  assert.deepEqual(
    events.filter((e) => e.type.startsWith("compaction")).map((e) =>
      e.type === "compactionStarted" || e.type === "compactionFinished" ? e.reason : ""
    ),
    ["manual", "manual"],
  );
  // The summary was asked for what the user named, and cost like any call.
  assert.match(JSON.stringify(server.chats[2].body), /keep the file names/);
  assert.equal(session.cost?.toFixed(6), (spent + (500 + 50 * 4) / 1e6).toFixed(6));
  assert.deepEqual(session.usage, {
    promptTokens: tokens.promptTokens + 500,
    completionTokens: tokens.completionTokens + 50,
  });

  await session.turn("third question");
  const next = JSON.stringify((server.chats[3].body as { messages: unknown[] }).messages);
  assert.match(next, /SUMMARY: a\.ts was discussed\./);
  assert.doesNotMatch(next, /first question/);
  assert.match(next, /second question[\s\S]*third question/);
  // The file keeps the whole history, and the record resumes to the compacted conversation.
  const saved = await SessionFile.load(configDir, session.id!);
  assert.equal(saved.compactions.length, 1);
  assert.match(JSON.stringify(saved.steps), /first question/);
  assert.doesNotMatch(JSON.stringify(saved.messages), /first question/);
});

Deno.test("a compaction inside a turn costs in the turn's and the session's dollars", async () => {
  await using o = await open([
    {
      text: `The first answer mentions src/a.ts. ${"More words on it. ".repeat(200)}`,
      usage: { promptTokens: 100, completionTokens: 10 },
    },
    { text: "SUMMARY: a.ts was discussed.", usage: { promptTokens: 500, completionTokens: 50 } },
    { text: "The second answer.", usage: { promptTokens: 100, completionTokens: 10 } },
  ], {
    // The second turn's request would pass 85% of this window: compacted before it is sent.
    models: { "fake-model": { contextWindow: 4000, input: 1, output: 4 } },
    compaction: { keepTurns: 1 },
  });
  const { session, events } = o;
  await session.turn("first question");
  const first = session.cost!;
  await session.turn("second question");
  const finished = events.find((e) => e.type === "compactionFinished");
  assert.ok(finished?.type === "compactionFinished" && finished.success, JSON.stringify(finished));
  // The summary's call and the answer's: (500 + 50 × 4) / 1e6 + (100 + 10 × 4) / 1e6.
  assert.equal(session.turnCost?.toFixed(6), "0.000840");
  assert.equal(session.cost?.toFixed(6), (first + 0.00084).toFixed(6));
});

// The smallest PNG the read tool takes for one: its signature, then a few bytes.
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

for (const [model, takes] of [["gpt-4o", true], ["gpt-3.5-turbo", false]] as const) {
  Deno.test(`the catalog decides whether ${model} is sent images (${takes})`, async () => {
    await using o = await open(
      [
        { toolCalls: [{ name: "read", arguments: { path: "dot.png" } }] },
        { text: "A dot." },
      ],
      {},
      model,
    );
    await Deno.writeFile(`${o.session.host.workspace}/dot.png`, PNG);
    await o.session.turn("what is in dot.png?");
    const second = JSON.stringify(o.server.chats[1].body);
    assert.equal(second.includes("data:image/png;base64,"), takes, second.slice(0, 2000));
  });
}
