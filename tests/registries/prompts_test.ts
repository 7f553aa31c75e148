import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Message, PromptBlockCapability, SealedContext } from "@amber/core";
import { createPromptRegistry, describeBlockError } from "@amber/registries/prompts";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

function block(name: string, priority: number, render: () => string): PromptBlockCapability {
  return { kind: "prompt", name, priority, render };
}

function frozen(messages: Message[]): SealedContext {
  for (const message of messages) Object.freeze(message);
  return Object.freeze(messages);
}

Deno.test("prompts: install returns a contribution that removes the block", () => {
  const prompts = createPromptRegistry();
  const v0 = prompts.version;
  const handle = contributionOf(
    prompts.install("a", block("facts", 400, () => "facts"), services("a")),
  );
  strictEqual(handle.kind, "prompt");
  strictEqual(handle.name, "facts");
  deepStrictEqual(handle.ids, ["facts"]);
  ok(prompts.version > v0);
  deepStrictEqual(prompts.entries(), [{ id: "facts", owner: "a" }]);
  handle.remove();
  handle.remove();
  deepStrictEqual(prompts.entries(), []);
  deepStrictEqual(prompts.assemble([]).messages, []);
});

Deno.test("prompts: a duplicate block name fails naming both plugins", () => {
  const prompts = createPromptRegistry();
  contributionOf(prompts.install("a", block("facts", 400, () => "a"), services("a")));
  const version = prompts.version;
  const result = prompts.install("b", block("facts", 500, () => "b"), services("b"));
  strictEqual(
    errorOf(result),
    "prompt block 'facts' from plugin 'b' collides with the block of plugin 'a'",
  );
  deepStrictEqual(conflictOf(result), { id: "facts", owner: "a" });
  strictEqual(prompts.version, version);
  deepStrictEqual(prompts.assemble([]).blocks, ["facts"]);
  strictEqual(prompts.assemble([]).messages[0].content, "a");
});

Deno.test("prompts: malformed blocks fail naming the block and the plugin", () => {
  const prompts = createPromptRegistry();
  match(
    errorOf(prompts.install("a", block("p", Number.NaN, () => ""), services("a"))),
    /prompt block 'p' from plugin 'a'.*priority/,
  );
  const noRender = { kind: "prompt", name: "r", priority: 1 } as unknown as PromptBlockCapability;
  match(errorOf(prompts.install("a", noRender, services("a"))), /'r' from plugin 'a'.*render/);
  strictEqual(prompts.entries().length, 0);
});

Deno.test("prompts: blocks sit between the leading system messages and the rest", () => {
  const prompts = createPromptRegistry();
  contributionOf(prompts.install("a", block("late", 900, () => "late"), services("a")));
  contributionOf(prompts.install("b", block("early", 100, () => "early"), services("b")));
  contributionOf(prompts.install("c", block("tie_first", 400, () => "tie 1"), services("c")));
  contributionOf(prompts.install("d", block("empty", 300, () => ""), services("d")));
  contributionOf(prompts.install("e", block("tie_second", 400, () => "tie 2"), services("e")));
  const sealed = frozen([
    { role: "system", content: "You are amber." },
    { role: "system", content: "Be careful." },
    { role: "user", content: "Hi" },
    { role: "system", content: "a later system note stays where it is" },
    { role: "assistant", content: "Hello" },
  ]);
  const prompt = prompts.assemble(sealed);
  deepStrictEqual(prompt.blocks, ["early", "tie_first", "tie_second", "late"]);
  deepStrictEqual(prompt.messages, [
    sealed[0],
    sealed[1],
    { role: "system", content: "early", source: "early" },
    { role: "system", content: "tie 1", source: "tie_first" },
    { role: "system", content: "tie 2", source: "tie_second" },
    { role: "system", content: "late", source: "late" },
    sealed[2],
    sealed[3],
    sealed[4],
  ]);
  ok(prompt.messages !== sealed);
  strictEqual(sealed.length, 5, "the sealed context is untouched");
});

Deno.test("prompts: a context without system messages gets the blocks first", () => {
  const prompts = createPromptRegistry();
  contributionOf(prompts.install("a", block("facts", 400, () => "facts"), services("a")));
  const sealed = frozen([{ role: "user", content: "Hi" }]);
  deepStrictEqual(prompts.assemble(sealed).messages, [
    { role: "system", content: "facts", source: "facts" },
    sealed[0],
  ]);
  const bare = createPromptRegistry().assemble(sealed);
  deepStrictEqual(bare.messages, [sealed[0]]);
  ok(bare.messages !== sealed, "always a new array");
});

Deno.test("prompts: a throwing render is left out and reported once until it recovers", () => {
  const reports: string[] = [];
  const prompts = createPromptRegistry({
    onError: (owner, name, error) => reports.push(describeBlockError(owner, name, error)),
  });
  let broken = true;
  contributionOf(
    prompts.install(
      "a",
      block("flaky", 400, () => {
        if (broken) throw new Error("stale cache");
        return "fresh";
      }),
      services("a"),
    ),
  );
  contributionOf(prompts.install("b", block("steady", 500, () => "steady"), services("b")));
  strictEqual(prompts.assemble([]).blocks.join(), "steady");
  strictEqual(prompts.assemble([]).blocks.join(), "steady");
  deepStrictEqual(reports, ["prompt block 'flaky' of plugin 'a' failed: stale cache"]);
  broken = false;
  deepStrictEqual(prompts.assemble([]).blocks, ["flaky", "steady"]);
  broken = true;
  prompts.assemble([]);
  strictEqual(reports.length, 2, "reported again after a success in between");
});

Deno.test("prompts: a throwing error sink and a non-string render are contained", () => {
  const prompts = createPromptRegistry({
    onError: () => {
      throw new Error("sink down");
    },
  });
  contributionOf(
    prompts.install("a", block("odd", 1, () => 42 as unknown as string), services("a")),
  );
  contributionOf(prompts.install("b", block("fine", 2, () => "fine"), services("b")));
  deepStrictEqual(prompts.assemble([]).blocks, ["fine"]);
});

Deno.test("prompts: firstChanged names the first block whose text or position moved", () => {
  const prompts = createPromptRegistry();
  let clock = 0;
  let rules = "Be terse.";
  contributionOf(prompts.install("a", block("rules", 100, () => rules), services("a")));
  const facts = contributionOf(
    prompts.install("b", block("facts", 400, () => "Deno project"), services("b")),
  );
  contributionOf(prompts.install("c", block("clock", 900, () => `turn ${clock}`), services("c")));

  strictEqual(prompts.assemble([]).firstChanged, "rules", "everything is new at first");
  strictEqual(prompts.assemble([]).firstChanged, undefined);
  clock++;
  strictEqual(prompts.assemble([]).firstChanged, "clock");
  rules = "Be very terse.";
  clock++;
  strictEqual(prompts.assemble([]).firstChanged, "rules");
  facts.remove();
  strictEqual(prompts.assemble([]).firstChanged, "clock", "clock moved into facts' position");
  contributionOf(prompts.install("d", block("tail", 950, () => "tail"), services("d")));
  strictEqual(prompts.assemble([]).firstChanged, "tail");
});

Deno.test("prompts: a block that vanished from the tail is the one reported", () => {
  const prompts = createPromptRegistry();
  let text = "tail";
  contributionOf(prompts.install("a", block("head", 100, () => "head"), services("a")));
  contributionOf(prompts.install("b", block("tail", 900, () => text), services("b")));
  prompts.assemble([]);
  text = "";
  strictEqual(prompts.assemble([]).firstChanged, "tail");
  strictEqual(prompts.assemble([]).firstChanged, undefined);
});

Deno.test("prompts: purge removes the owner's blocks and returns their names", () => {
  const prompts = createPromptRegistry();
  contributionOf(prompts.install("a", block("one", 1, () => "1"), services("a")));
  contributionOf(prompts.install("b", block("two", 2, () => "2"), services("b")));
  contributionOf(prompts.install("a", block("three", 3, () => "3"), services("a")));
  const version = prompts.version;
  deepStrictEqual(prompts.purge("a"), ["one", "three"]);
  ok(prompts.version > version);
  deepStrictEqual(prompts.assemble([]).blocks, ["two"]);
  deepStrictEqual(prompts.purge("a"), []);
});

Deno.test("prompts: a later registration at the same priority still comes after", () => {
  const prompts = createPromptRegistry();
  const first = contributionOf(prompts.install("a", block("x", 5, () => "x"), services("a")));
  contributionOf(prompts.install("b", block("y", 5, () => "y"), services("b")));
  first.remove();
  contributionOf(prompts.install("a", block("x", 5, () => "x"), services("a")));
  deepStrictEqual(prompts.assemble([]).blocks, ["y", "x"]);
});
