// A markdown command through the HTTP API: a served prompt `/review src` sends the expanded
// template to the model as the user's message, as `amber run` and `amber acp` do.

import assert from "node:assert/strict";
import { isEnd, readEvents, serve } from "../serve/_served.ts";

Deno.test("amber serve runs a workspace's markdown command and sends its expanded prompt", async () => {
  await using s = await serve();
  const { workspace, baseUrl } = await s.workspace([{ text: "All good." }, { text: "Plain." }]);
  await Deno.mkdir(`${workspace}/.amber/commands`, { recursive: true });
  await Deno.writeTextFile(
    `${workspace}/.amber/commands/review.md`,
    "---\ndescription: Review code\nargument-hint: [path]\nmodel: other-model\n---\nReview $1 for bugs.\n",
  );
  const response = await s.call("POST", "/sessions", {
    workspace,
    provider: "openai",
    model: "fake-model",
    baseUrl,
  });
  assert.equal(response.status, 201);
  const { id } = await response.json();
  assert.equal(
    (await s.call("POST", `/sessions/${id}/prompt`, { text: "/review src" })).status,
    202,
  );
  const events = await readEvents(s, id, isEnd);
  assert.equal((events.at(-1)?.data.cause as { kind: string }).kind, "completed");
  const transcript = await (await s.call("GET", `/sessions/${id}/transcript`)).json();
  assert.deepEqual(
    transcript.messages.map((m: { role: string; content: string }) => [m.role, m.content]),
    [["user", "Review src for bugs.\n"], ["assistant", "All good."]],
  );
  // The command's model answered its turn; the next prompt has the session's model again.
  assert.equal((await s.call("POST", `/sessions/${id}/prompt`, { text: "And now?" })).status, 202);
  await readEvents(s, id, (e) => isEnd(e) && e.id > events.at(-1)!.id);
  const models = s.requests().map((r) => (r.body as { model?: string }).model);
  assert.deepEqual(models, ["other-model", "fake-model"]);
});
