// `amber run` over a long conversation, as a user runs it: real subprocesses against the fake
// provider on loopback, `models:` in config.yaml giving the model a small window and prices.
// A conversation that outgrows the window is compacted before the request that would pass the
// share, --json says so and prices every call, and --resume goes on from the compacted
// conversation; --compact-at moves the threshold and refuses what is not a share.

import assert from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import {
  FakeProvider,
  openaiEncoder,
  type RecordedRequest,
  type ScriptedTurn,
} from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { runAmber } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };
// Dollars per million tokens: input 2, output 10.
const CONFIG = {
  models: { "fake-model": { contextWindow: 4000, input: 2, output: 10 } },
  compaction: { keepTurns: 1 },
};
// A file whose reading fills most of the window: about 2,000 tokens.
const BIG = Array.from({ length: 300 }, (_, i) => `detail ${i} of the notes\n`).join("");
const SUMMARY = "SUMMARY: the user had big.txt read; it lists details 0 to 299.";

// The first run reads big.txt and answers; the second's summary, then its answer.
const TWO_RUNS: ScriptedTurn[] = [
  {
    toolCalls: [{ name: "read", arguments: { path: "big.txt" } }],
    usage: { promptTokens: 1000, completionTokens: 10 },
  },
  { text: "It lists 300 details.", usage: { promptTokens: 1200, completionTokens: 5 } },
  { text: SUMMARY, usage: { promptTokens: 300, completionTokens: 20 } },
  { text: "Still here.", usage: { promptTokens: 500, completionTokens: 5 } },
];

type Event = { readonly type: string; readonly [key: string]: unknown };

function amber(dir: string, server: FakeProvider, args: string[]) {
  return runAmber(dir, [...args, "--base-url", `${server.url}/v1`, "--model", "fake-model"], {
    cwd: dir,
    env: { INIT_CWD: dir, ...KEY },
    trim: false,
  });
}

function events(out: string): Event[] {
  return out.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

function sent(request: RecordedRequest): string {
  return JSON.stringify((request.body as { messages: unknown[] }).messages);
}

async function world(): Promise<{ dir: string; server: FakeProvider } & AsyncDisposable> {
  const tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, JSON.stringify(CONFIG));
  await Deno.writeTextFile(`${tmp.dir}/big.txt`, BIG);
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  return {
    dir: tmp.dir,
    server,
    async [Symbol.asyncDispose]() {
      await server.close();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

Deno.test("a conversation past the window's share is compacted, priced, and resumed from the compacted context", async () => {
  await using w = await world();
  const { dir, server } = w;
  server.script(
    ...TWO_RUNS,
    // The third run's answer.
    { text: "Third answer.", usage: { promptTokens: 500, completionTokens: 4 } },
  );

  // 1: the file is read; every request says its size and the window, every call its price.
  const first = await amber(dir, server, ["run", "read big.txt", "--json"]);
  assert.equal(first.code, 0, first.err);
  const one = events(first.out);
  const id = String(one[0].id);
  const requests = one.filter((e) => e.type === "request");
  assert.equal(requests.length, 2);
  for (const request of requests) {
    assert.equal(request.contextWindow, 4000);
    assert.ok(Number(request.tokens) > 0 && Number(request.tokens) < 3400, String(request.tokens));
  }
  const costs = one.filter((e) => e.type === "usage").map((e) => e.cost);
  // (1000 × 2 + 10 × 10) / 1e6 and (1200 × 2 + 5 × 10) / 1e6.
  assert.deepEqual(costs.map((c) => Number(c).toFixed(5)), ["0.00210", "0.00245"]);
  assert.equal(one.some((e) => e.type.startsWith("compaction")), false);

  // 2: resumed, the request would pass 85% of the window: compacted before it is sent.
  const second = await amber(dir, server, ["run", "again", "--resume", id, "--json"]);
  assert.equal(second.code, 0, second.err);
  const two = events(second.out);
  const started = two.find((e) => e.type === "compactionStarted");
  const finished = two.find((e) => e.type === "compactionFinished");
  assert.deepEqual(
    { reason: started?.reason, budget: started?.budget, threshold: started?.threshold },
    { reason: "auto", budget: 4000, threshold: 3400 },
  );
  assert.equal(finished?.success, true, JSON.stringify(finished));
  assert.equal(finished?.strategy, "default");
  assert.ok(Number(finished?.tokensAfter) < Number(finished?.tokensBefore));
  const types = two.map((e) => e.type);
  assert.ok(types.indexOf("compactionFinished") < types.lastIndexOf("request"));
  const after = two.findLast((e) => e.type === "request");
  assert.ok(Number(after?.tokens) < 3400, JSON.stringify(after));
  assert.equal(two.find((e) => e.type === "usage")?.cost, (500 * 2 + 5 * 10) / 1e6);
  // The request after the summary carries it instead of the file's text.
  const compacted = sent(server.chats[3]);
  assert.match(compacted, /SUMMARY: the user had big\.txt read/);
  assert.doesNotMatch(compacted, /detail 150 of the notes/);
  assert.match(compacted, /again/);

  // On disk: the full history, and the compaction as its own record.
  const saved = await SessionFile.load(dir, id);
  assert.equal(saved.compactions.length, 1);
  assert.ok(saved.steps.some((step) => JSON.stringify(step).includes("detail 150 of the notes")));

  // 3: resumed again, the conversation is the compacted one; the turn's cost is said on stderr.
  const third = await amber(dir, server, ["run", "and now?", "--resume", id]);
  assert.equal(third.code, 0, third.err);
  assert.equal(third.out, "Third answer.\n");
  assert.doesNotMatch(third.err, /compacting/);
  assert.match(third.err, /amber: this turn cost \$0\.001 \(the session \$0\.0\d\d\)\n/);
  const resumed = sent(server.chats[4]);
  assert.match(resumed, /SUMMARY: the user had big\.txt read/);
  assert.doesNotMatch(resumed, /detail 150 of the notes/);
  assert.match(resumed, /again[\s\S]*Still here\.[\s\S]*and now\?/);
});

Deno.test("amber run says a compaction on stderr, and --compact-at moves the threshold", async () => {
  await using w = await world();
  const { dir, server } = w;
  server.script(...TWO_RUNS);
  // At 75% the second request (about 3,200 tokens) passes the threshold; the one turn there is
  // is kept verbatim, so there is nothing to compact, and stderr says so.
  const first = await amber(dir, server, ["run", "read big.txt", "--compact-at", "75%"]);
  assert.equal(first.code, 0, first.err);
  assert.equal(first.out, "It lists 300 details.\n");
  assert.match(
    first.err,
    /amber: compacting the conversation: [\d.]+k tokens, past 75% of the 4\.0k-token window\n/,
  );
  assert.match(first.err, /amber: the conversation was not compacted: .+\n/);
  assert.match(first.err, /amber: this turn cost \$0\.005\n/);
  const id = /session (\S+) /.exec(first.err)![1];

  const second = await amber(dir, server, ["run", "again", "--resume", id, "--compact-at", "0.9"]);
  assert.equal(second.code, 0, second.err);
  assert.equal(second.out, "Still here.\n");
  assert.match(
    second.err,
    /amber: compacting the conversation: [\d.]+k tokens, past 90% of the 4\.0k-token window\n/,
  );
  assert.match(
    second.err,
    /amber: compacted the conversation: [\d.]+k → [\d.]+k tokens \(default\)\n/,
  );
});

Deno.test("--compact-at takes a share above 0 and at most 1, or a percent; anything else is a usage error", async () => {
  await using tmp = await tempDir();
  for (const value of ["0", "85", "1.5", "0%", "120%", "abc", "-0.5"]) {
    const result = await runAmber(tmp.dir, ["run", "hi", "--compact-at", value], {
      cwd: tmp.dir,
      env: KEY,
    });
    assert.equal(result.code, 2, `${value}: ${result.err}`);
    assert.equal(
      result.err,
      "amber: --compact-at must be a share of the context window above 0 and at most 1 " +
        `(like 0.85, or 85%), got '${value}'`,
    );
  }
});

Deno.test("--compact-at for a model whose window nobody knows says it did nothing", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "Hi." });
  const result = await amber(tmp.dir, server, ["run", "hello", "--compact-at", "0.5"]);
  assert.equal(result.code, 0, result.err);
  assert.equal(result.out, "Hi.\n");
  assert.match(
    result.err,
    /amber: --compact-at did nothing: the context window of fake-model is unknown \(set models\.fake-model\.contextWindow in config\.yaml\)\n/,
  );
});
