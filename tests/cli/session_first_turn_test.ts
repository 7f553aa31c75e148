// The session's first turn as every front end (amber run, the interactive session) gets it: a
// turn the provider never answered leaves no session file or lock, and a 401 says which
// variable holds the rejected key.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { openFakeSession } from "./_fake_session.ts";

async function entries(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();
  } catch {
    return [];
  }
}

Deno.test("a first turn refused with a 401 names the key, and leaves no session behind", async () => {
  await using fake = await openFakeSession([
    { fault: { kind: "status", status: 401, message: "Incorrect API key provided" } },
    { text: "hello" },
  ]);
  const { session, configDir, events } = fake;
  const result = await session.turn("hi");
  strictEqual(result.cause.kind, "error");
  const failure = result.cause.kind === "error" ? result.cause.failure : undefined;
  strictEqual(failure?.kind, "provider");
  match(
    failure?.kind === "provider" ? failure.message : "",
    /^OPENAI_API_KEY is rejected by openai \(401\): set it to a valid key \(.*Incorrect API key/,
  );
  const shown = events.filter((event) => event.type === "error");
  ok(shown.length > 0);
  for (const event of shown) {
    match(event.type === "error" ? event.message : "", /^OPENAI_API_KEY is rejected by openai/);
  }
  strictEqual(session.id, undefined);
  deepStrictEqual(await entries(join(configDir, "sessions")), []);
  deepStrictEqual(await entries(join(configDir, "locks", "sessions")), []);

  // The next turn starts a session afresh, without the refused prompt in it.
  const next = await session.turn("hi again");
  strictEqual(next.cause.kind, "completed");
  ok(session.id !== undefined);
  deepStrictEqual(await entries(join(configDir, "sessions")), [`${session.id}.jsonl`]);
  const users = next.messages.filter((message) => message.role === "user");
  deepStrictEqual(users.map((message) => message.content), ["hi again"]);
});

Deno.test("a later turn that fails keeps the session it belongs to", async () => {
  await using fake = await openFakeSession([
    { text: "hello" },
    { fault: { kind: "status", status: 400, message: "bad request" } },
  ]);
  const { session, configDir } = fake;
  strictEqual((await session.turn("hi")).cause.kind, "completed");
  const id = session.id;
  strictEqual((await session.turn("again")).cause.kind, "error");
  strictEqual(session.id, id);
  deepStrictEqual(await entries(join(configDir, "sessions")), [`${id}.jsonl`]);
});
