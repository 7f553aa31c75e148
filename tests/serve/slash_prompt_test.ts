// A served prompt naming a command runs it, as `amber run` and `amber acp` do: its answer is the
// turn's text and no request reaches the model; an unknown word goes to the model as written.

import assert from "node:assert/strict";
import { created, isEnd, readEvents, serve, type Sse } from "./_served.ts";

const text = (events: Sse[]) =>
  events.filter((e) => e.event === "text").map((e) => e.data.delta).join("");

Deno.test("a served prompt naming a command runs it, without a model request", async () => {
  await using s = await serve();
  const id = await created(s, [{ text: "From the model." }]);
  const plugins = async () =>
    (await (await s.call("GET", `/sessions/${id}/plugins`)).json()).plugins as {
      id: string;
      state: string;
    }[];
  assert.equal((await plugins()).find((p) => p.id === "hello")?.state, "disabled");

  assert.equal(
    (await s.call("POST", `/sessions/${id}/prompt`, { text: "/set plugin on hello" }))
      .status,
    202,
  );
  const off = await readEvents(s, id, isEnd);
  assert.match(text(off), /hello/);
  assert.equal(off.at(-1)?.event, "end");
  assert.equal((off.at(-1)?.data.cause as { kind: string }).kind, "completed");
  assert.equal((await plugins()).find((p) => p.id === "hello")?.state, "active");

  // A command that does not exist is an error end, and no model request is made for it.
  assert.equal(
    (await s.call("POST", `/sessions/${id}/prompt`, { text: "/set plugin" })).status,
    202,
  );
  const wrong = await readEvents(s, id, (e) => isEnd(e) && e.id > off.at(-1)!.id);
  assert.equal((wrong.at(-1)?.data.cause as { kind: string }).kind, "error");
  assert.match(text(wrong.filter((e) => e.id > off.at(-1)!.id)), /usage: \/set plugin on\|off/);

  const transcript = await (await s.call("GET", `/sessions/${id}/transcript`)).json();
  assert.deepEqual(transcript.messages, [], "no command reached the model");

  // A slash word that names no command is a prompt for the model, as written.
  assert.equal(
    (await s.call("POST", `/sessions/${id}/prompt`, { text: "/tmp is full" })).status,
    202,
  );
  const last = wrong.at(-1)!.id;
  const model = await readEvents(s, id, (e) => isEnd(e) && e.id > last);
  assert.equal(text(model.filter((e) => e.id > last)), "From the model.");
});
