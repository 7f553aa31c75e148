// What the model picker lists: the provider's own listing merged with the catalog's figures; and
// when the provider cannot be asked (offline, no key), the catalog's models with a note saying
// why. The presets say whether their key is set.

import assert from "node:assert/strict";
import { modelList, providerList } from "../../cli/tui/pick_lists.ts";
import { openFakeSession } from "../cli/_fake_session.ts";

Deno.test("the provider's listing, with the catalog's window and prices for the ids it knows", async () => {
  await using fake = await openFakeSession([], { model: "gpt-5-mini" });
  fake.server.models = ["gpt-5-mini", "o3", "my-finetune"];
  const { session } = fake;
  const list = await modelList({
    host: session.host,
    overrides: session.overrides,
    model: "gpt-5-mini",
  });
  assert.deepEqual(list.notes, []);
  assert.deepEqual(list.items.map((item) => item.columns), [
    ["gpt-5-mini (in use)", "400,000", "0.25", "2"],
    ["my-finetune", "-", "-", "-"],
    ["o3", "200,000", "2", "8"],
  ]);
  assert.deepEqual(list.items.map((item) => item.current ?? false), [true, false, false]);
  assert.equal(list.values[0].help, "400,000 tokens · $0.25 / $2 per M · in use");
});

Deno.test("a provider that cannot be reached: the catalog's models, and why", async () => {
  await using fake = await openFakeSession([], { model: "gpt-5-mini" });
  const { session } = fake;
  const list = await modelList({
    host: session.host,
    overrides: { ...session.overrides, baseUrl: "http://127.0.0.1:9/v1" },
    model: "gpt-5-mini",
  });
  assert.equal(list.notes.length, 1);
  assert.match(list.notes[0], /^openai could not list its models \(.+\); the catalog's are shown$/);
  const ids = list.items.map((item) => item.value);
  assert.ok(ids.length > 5 && ids.includes("gpt-5-mini") && ids.includes("o3"), ids.join());
});

Deno.test({
  name: "a provider without its key is not asked: the catalog's models, and which variable to set",
  ignore: Deno.env.get("MOONSHOT_API_KEY") !== undefined,
  async fn() {
    await using fake = await openFakeSession([]);
    const { session } = fake;
    const list = await modelList({
      host: session.host,
      overrides: { provider: "moonshot" },
      model: "kimi-k2.6",
    });
    assert.deepEqual(list.notes, [
      "MOONSHOT_API_KEY is not set, so moonshot was not asked; the catalog's models are shown",
    ]);
    assert.ok(list.items.some((item) => item.value === "kimi-k2.6" && item.current));
    assert.equal(fake.server.requests.length, 0, "nothing was asked");
    const presets = providerList(session.host, "openai");
    const moonshot = presets.items.find((item) => item.value === "moonshot");
    assert.deepEqual(moonshot?.columns.slice(0, 2), ["moonshot", "MOONSHOT_API_KEY not set"]);
    assert.equal(presets.items.find((item) => item.current)?.value, "openai");
  },
});
