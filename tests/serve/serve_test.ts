// `amber serve` end to end over real HTTP on 127.0.0.1: the real hosts, bundled plugins and
// kernel against the fake provider on loopback, a config directory and workspaces of their own
// (the fixture is _served.ts).

import assert from "node:assert/strict";
import {
  created,
  drained,
  isEnd,
  kindOf,
  openEvents,
  readEvents,
  readUntil,
  serve,
  type Sse,
  TOKEN,
} from "./_served.ts";

Deno.test("a wrong or missing token is refused with a problem", async () => {
  await using s = await serve();
  for (const token of ["wrong-token", ""]) {
    const response = await s.call("GET", "/sessions", undefined, token);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get("content-type"), "application/problem+json");
    assert.equal((await response.json()).status, 401);
  }
  const document = await s.call("GET", "/openapi.json");
  assert.equal(document.status, 200);
  assert.equal((await document.json()).openapi, "3.1.0");
  assert.equal((await drained(await fetch(`${s.server.url}/openapi.json`))).status, 401);
  const bare = await drained(await fetch(`${s.server.url}/sessions`));
  assert.equal(bare.status, 401);
  const other = await drained(
    await fetch(`${s.server.url}/sessions`, { headers: { authorization: `Basic ${TOKEN}` } }),
  );
  assert.equal(other.status, 401);
});

Deno.test("an oversized body is refused with 413", async () => {
  await using s = await serve({ bodyLimit: 1024 });
  const response = await s.call("POST", "/sessions", { workspace: "x".repeat(2048) });
  assert.equal(response.status, 413);
  assert.equal((await response.json()).status, 413);
  // Sent without a Content-Length: found while reading.
  const chunked = await fetch(`${s.server.url}/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}` },
    body: ReadableStream.from([new TextEncoder().encode(`{"workspace":"${"y".repeat(4096)}"}`)]),
  });
  assert.equal(chunked.status, 413);
  await chunked.body?.cancel();
});

Deno.test("bad input gets a problem naming the field", async () => {
  await using s = await serve();
  const { workspace } = await s.workspace([]);
  const cases: [unknown, string][] = [
    [{}, "workspace"],
    [{ workspace: 7 }, "workspace"],
    [{ workspace: `${workspace}/missing` }, "workspace"],
    [{ workspace, approve: "maybe" }, "approve"],
    [{ workspace, model: ["x"] }, "model"],
    [{ workspace, plugins: [] }, "plugins"],
    [{ workspace, plugins: { enable: ["tool_read", 3] } }, "plugins.enable[1]"],
    [{ workspace, plugins: { disable: ["no_such_plugin"] } }, "plugins.disable[0]"],
    [{ workspace, provider: "no_such_provider" }, "provider"],
  ];
  for (const [body, field] of cases) {
    const response = await s.call("POST", "/sessions", body);
    const problem = await response.json();
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(problem.field, field, JSON.stringify(problem));
    assert.equal(typeof problem.detail, "string");
  }
  const notJson = await s.call("POST", "/sessions", undefined);
  assert.equal(notJson.status, 400);
  await notJson.body?.cancel();
  const id = await created(s, []);
  const prompt = await s.call("POST", `/sessions/${id}/prompt`, { text: 42 });
  assert.equal(prompt.status, 400);
  assert.equal((await prompt.json()).field, "text");
  const unknown = await s.call("GET", "/sessions/nope");
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).field, "id");
});

Deno.test("two sessions run turns at once, each on its own workspace", async () => {
  await using s = await serve();
  const first = await created(s, [{ text: "Answer one, from the first workspace." }]);
  const second = await created(s, [{ text: "Answer two, from the second." }]);
  const [one, two] = await Promise.all([first, second].map(async (id, index) => {
    const response = await s.call("POST", `/sessions/${id}/prompt`, { text: `hello ${index}` });
    assert.equal(response.status, 202);
    assert.deepEqual(await response.json(), { turn: 1, from: 0 });
    return await readEvents(s, id, isEnd);
  }));
  const text = (events: Sse[]) =>
    events.filter((e) => e.event === "text").map((e) => e.data.delta).join("");
  assert.equal(text(one), "Answer one, from the first workspace.");
  assert.equal(text(two), "Answer two, from the second.");
  for (const events of [one, two]) {
    assert.deepEqual(events.map((e) => e.id), events.map((_, i) => i), "offsets from 0, no gap");
    assert.equal(events[0].event, "session");
    assert.equal(events.at(-1)?.event, "end");
    assert.equal(kindOf(events.at(-1)), "completed");
  }
  const list = await (await s.call("GET", "/sessions")).json();
  assert.deepEqual(list.sessions.map((x: { id: string }) => x.id).sort(), [first, second].sort());
  assert.ok(list.sessions.every((x: { busy: boolean }) => x.busy === false));
  const transcript = await (await s.call("GET", `/sessions/${first}/transcript`)).json();
  assert.deepEqual(
    transcript.messages.map((m: { role: string }) => m.role),
    ["user", "assistant"],
  );
  assert.equal(transcript.messages[1].content, "Answer one, from the first workspace.");
  const detail = await (await s.call("GET", `/sessions/${second}`)).json();
  assert.equal(detail.events, two.length);
});

Deno.test("a client that disconnects mid-turn reattaches and answers the approval", async () => {
  await using s = await serve();
  const id = await created(s, [
    { toolCalls: [{ name: "bash", arguments: { command: "echo served > made.txt" } }] },
    { text: "Made it." },
  ], { approve: "ask" });
  const accepted = await s.call("POST", `/sessions/${id}/prompt`, { text: "make a file" });
  assert.equal(accepted.status, 202);
  const before = await readEvents(s, id, (e) => e.event === "approval");
  const approval = before.at(-1)!;
  assert.equal((approval.data.call as { name: string }).name, "bash");
  assert.match(String(approval.data.summary), /echo served/);
  // Gone: the turn waits on, busy, for an answer.
  const waiting = await (await s.call("GET", `/sessions/${id}`)).json();
  assert.equal(waiting.busy, true);
  const busy = await s.call("POST", `/sessions/${id}/prompt`, { text: "another" });
  assert.equal(busy.status, 409);
  await busy.body?.cancel();
  // Reattached from the approval's offset (Last-Event-ID is the last seen: one before it).
  const requestId = String(approval.data.requestId);
  const answered = s.call("POST", `/sessions/${id}/approvals/${requestId}`, { answer: "once" });
  const after = await readEvents(s, id, isEnd, { "last-event-id": String(approval.id - 1) });
  assert.equal((await drained(await answered)).status, 204);
  assert.equal(after[0].id, approval.id);
  assert.deepEqual(after[0].data, approval.data);
  assert.equal(kindOf(after.at(-1)), "completed");
  const workspace = (await (await s.call("GET", `/sessions/${id}`)).json()).workspace;
  assert.equal(await Deno.readTextFile(`${workspace}/made.txt`), "served\n");
  // A replay from an offset gives the same events as the live stream did.
  const replay = await readEvents(s, id, isEnd, {}, `?from=${before[2].id}`);
  assert.deepEqual(replay.slice(0, before.length - 2), before.slice(2));
  const again = await s.call("POST", `/sessions/${id}/approvals/${requestId}`, { answer: "once" });
  assert.equal(again.status, 404);
  assert.equal((await again.json()).field, "requestId");
  const bad = await s.call("POST", `/sessions/${id}/approvals/${requestId}`, { answer: "yes" });
  assert.equal((await bad.json()).field, "answer");
});

Deno.test("cancel ends the turn, delete closes the session", async () => {
  await using s = await serve();
  const id = await created(s, [{
    text: "too late",
    fault: { kind: "slowFirstByte", delayMs: 3000 },
  }]);
  const accepted = await (await s.call("POST", `/sessions/${id}/prompt`, { text: "wait" })).json();
  assert.equal(accepted.turn, 1);
  const cancelled = await s.call("POST", `/sessions/${id}/cancel`);
  assert.equal(cancelled.status, 204);
  const events = await readEvents(s, id, isEnd);
  assert.equal(kindOf(events.at(-1)), "cancelled");
  assert.equal((await drained(await s.call("DELETE", `/sessions/${id}`))).status, 204);
  assert.equal((await drained(await s.call("GET", `/sessions/${id}`))).status, 404);
  assert.deepEqual(await (await s.call("GET", "/sessions")).json(), { sessions: [] });
});

Deno.test("a session's plugins are listed, planned off and switched", async () => {
  await using s = await serve();
  const id = await created(s, []);
  const listed = await (await s.call("GET", `/sessions/${id}/plugins`)).json();
  const read = listed.plugins.find((p: { id: string }) => p.id === "tool_read");
  assert.equal(read.state, "active");
  assert.equal(typeof read.version, "string");
  const dry = await s.call("POST", `/sessions/${id}/plugins/tool_read/disable?dryRun=true`);
  assert.equal(dry.status, 200);
  const { plan } = await dry.json();
  assert.equal(plan.pluginId, "tool_read");
  assert.deepEqual(plan.plugins.map((p: { pluginId: string }) => p.pluginId), ["tool_read"]);
  const still = await (await s.call("GET", `/sessions/${id}/plugins`)).json();
  assert.equal(still.plugins.find((p: { id: string }) => p.id === "tool_read").state, "active");
  const off = await s.call("POST", `/sessions/${id}/plugins/tool_read/disable`);
  assert.equal((await off.json()).state, "disabled");
  const on = await s.call("POST", `/sessions/${id}/plugins/tool_read/enable`);
  assert.equal((await on.json()).state, "active");
  const unknown = await s.call("POST", `/sessions/${id}/plugins/no_such/enable`);
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).field, "pluginId");
});

Deno.test("a session keeps its newest events; a replay from before them starts at the oldest", async () => {
  await using s = await serve({ eventCapacity: 4 });
  const id = await created(s, [{ text: "a long answer in many small pieces", chunkSize: 2 }]);
  // Following before the turn starts: the live stream misses nothing the log drops.
  const stream = await openEvents(s, id);
  await drained(await s.call("POST", `/sessions/${id}/prompt`, { text: "go" }));
  const live = await readUntil(stream, isEnd);
  assert.ok(live.length > 10, `${live.length} events`);
  const detail = await (await s.call("GET", `/sessions/${id}`)).json();
  const replay = await readEvents(s, id, isEnd, {}, "?from=0");
  assert.deepEqual(replay.map((e) => e.id), [0, 1, 2, 3].map((i) => detail.events - 4 + i));
  assert.deepEqual(replay, live.slice(-4));
});

Deno.test("what a new session leaves out comes from the server's defaults", async () => {
  await using s = await serve({ defaults: { model: "served-default" } });
  const { workspace, baseUrl } = await s.workspace([]);
  const response = await s.call("POST", "/sessions", { workspace, provider: "openai", baseUrl });
  assert.equal(response.status, 201);
  assert.equal((await response.json()).model, "served-default");
  const chosen = await s.call("POST", "/sessions", {
    workspace,
    provider: "openai",
    baseUrl,
    model: "chosen",
  });
  assert.equal((await chosen.json()).model, "chosen");
});

Deno.test("a session host's diagnostics reach the server's handler", async () => {
  const diagnostics: string[] = [];
  await using s = await serve({ onDiagnostic: (d) => diagnostics.push(d.pluginId) });
  await Deno.mkdir(`${s.configDir}/plugins/tool_read`, { recursive: true });
  await Deno.writeTextFile(`${s.configDir}/plugins/tool_read/plugin.conf`, "enabled: nope\n");
  await created(s, []);
  assert.ok(diagnostics.includes("tool_read"), diagnostics.join(", "));
});
