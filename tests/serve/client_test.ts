// The typed client of `amber serve` over real HTTP on 127.0.0.1, against the real server
// (cli/serve/server.ts) with the bundled plugins on the fake provider: every method, the event
// stream replayed from an offset and followed live, an approval answered, and refusals thrown
// as AmberApiError with the server's problem+json.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { makeBundledPlugins } from "@amber/plugins";
import {
  AmberApiError,
  AmberClient,
  parseEvents,
  type ServeEvent,
} from "../../cli/serve/client.ts";
import { startServer } from "../../cli/serve/server.ts";

const TOKEN = "test-token";

interface Served extends AsyncDisposable {
  readonly client: AmberClient;
  readonly url: string;
  readonly workspace: string;
  readonly provider: FakeProvider;
}

/** The server on 127.0.0.1 and a client of it; the fake provider answers with `turns`. */
async function serve(turns: readonly ScriptedTurn[]): Promise<Served> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-client-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-client-ws-" });
  await Deno.writeTextFile(
    `${configDir}/config.yaml`,
    JSON.stringify({ provider: "openai", model: "fake-model" }),
  );
  const provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  provider.script(...turns);
  const server = await startServer({
    token: TOKEN,
    plugins: () => makeBundledPlugins(),
    configDir,
    thirdParty: false,
    env: (name) => name === "OPENAI_API_KEY" ? "sk-fake-client-key" : undefined,
  });
  const client = new AmberClient({ baseUrl: server.url, token: TOKEN });
  return {
    client,
    url: server.url,
    workspace,
    provider,
    async [Symbol.asyncDispose]() {
      await server.close();
      await provider.close();
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

/** Opens a session on the fake provider. */
function open(s: Served, approve: "ask" | "auto" | "deny" = "ask") {
  return s.client.createSession({
    workspace: s.workspace,
    provider: "openai",
    model: "fake-model",
    baseUrl: `${s.provider.url}/v1`,
    approve,
  });
}

/** The text the assistant streamed in `events`. */
function textOf(events: readonly ServeEvent[]): string {
  return events.filter((e) => e.type === "text").map((e) => (e.data as { delta: string }).delta)
    .join("");
}

/** Waits until the session's turn has committed. */
async function waitIdle(client: AmberClient, id: string): Promise<void> {
  for (let i = 0; i < 200 && (await client.session(id)).busy; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Reads events until one of type `until` (included). */
async function readUntil(
  events: AsyncIterable<ServeEvent>,
  until: string,
): Promise<ServeEvent[]> {
  const seen: ServeEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (event.type === until) break;
  }
  return seen;
}

Deno.test("client: sessions are created, listed, read and deleted", async () => {
  await using s = await serve([]);
  const created = await open(s);
  assert.deepEqual(created, {
    id: created.id,
    workspace: s.workspace,
    provider: "openai",
    model: "fake-model",
  });
  assert.deepEqual(await s.client.sessions(), [{ ...created, busy: false }]);
  assert.deepEqual(await s.client.session(created.id), { ...created, busy: false, events: 0 });
  assert.deepEqual(await s.client.transcript(created.id), []);
  await s.client.deleteSession(created.id);
  assert.deepEqual(await s.client.sessions(), []);
});

Deno.test("client: a prompt's events stream, and replay from an offset after a disconnect", async () => {
  await using s = await serve([{ text: "first answer" }, { text: "second answer" }]);
  // A base URL with a trailing slash resolves the routes the same.
  const client = new AmberClient({ baseUrl: `${s.url}/`, token: TOKEN });
  const { id } = await open(s);
  const accepted = await client.prompt(id, { text: "hello" });
  assert.deepEqual(accepted, { turn: 1, from: 0 });
  const first = await readUntil(client.events(id, { from: accepted.from }), "end");
  assert.deepEqual(first.map((e) => e.offset), first.map((_, i) => i), "offsets count from 0");
  assert.equal(textOf(first), "first answer");
  const end = first.at(-1)!;
  assert.equal((end.data as { cause: { kind: string } }).cause.kind, "completed");

  // Breaking out of the loop closed the connection; a reattach replays from the offset asked.
  const again = await readUntil(client.events(id, { from: end.offset }), "end");
  assert.deepEqual(again, [end]);

  await waitIdle(client, id);
  const second = await client.prompt(id, { text: "more" });
  assert.deepEqual(second, { turn: 2, from: end.offset + 1 });
  const replayed = await readUntil(client.events(id, { from: second.from }), "end");
  assert.equal(replayed[0].offset, second.from);
  assert.equal(textOf(replayed), "second answer");
  await waitIdle(client, id);
  const said = (await client.transcript(id)).map((m) => [m.role, m.content]);
  assert.deepEqual(said, [
    ["user", "hello"],
    ["assistant", "first answer"],
    ["user", "more"],
    ["assistant", "second answer"],
  ]);
});

Deno.test("client: an approval event is answered over the API and the turn goes on", async () => {
  await using s = await serve([
    { toolCalls: [{ name: "bash", arguments: { command: "echo approved-by-api" } }] },
    { text: "ran it" },
  ]);
  const { id } = await open(s, "ask");
  const { from } = await s.client.prompt(id, { text: "run it" });
  const seen: string[] = [];
  for await (const event of s.client.events(id, { from })) {
    seen.push(event.type);
    if (event.type === "approval") {
      const data = event.data as { requestId: string; summary: string };
      assert.match(data.summary, /echo approved-by-api/);
      // The session is busy while it waits: a second prompt is refused with 409.
      await assert.rejects(
        s.client.prompt(id, { text: "again" }),
        (error: unknown) => error instanceof AmberApiError && error.status === 409,
      );
      await s.client.answerApproval(id, data.requestId, "once");
    }
    if (event.type === "toolEnd") {
      const result = (event.data as { result: { ok: boolean; output: string } }).result;
      assert.equal(result.ok, true);
      assert.match(result.output, /approved-by-api/);
    }
    if (event.type === "end") break;
  }
  assert.ok(seen.includes("approval") && seen.includes("toolEnd"), seen.join(" "));
  assert.ok(seen.indexOf("approval") < seen.indexOf("toolEnd"));
});

Deno.test("client: refusals throw AmberApiError carrying the problem+json", async () => {
  await using s = await serve([]);
  const wrong = new AmberClient({ baseUrl: s.url, token: "wrong" });
  const unauthorized = await wrong.sessions().then(() => undefined, (error: unknown) => error);
  assert.ok(unauthorized instanceof AmberApiError);
  assert.equal(unauthorized.name, "AmberApiError");
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.problem.title, "Unauthorized");

  const bad = await s.client.createSession({ workspace: `${s.workspace}/missing` }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(bad instanceof AmberApiError);
  assert.equal(bad.status, 400);
  assert.equal(bad.problem.field, "workspace");
  assert.match(bad.message, /^400 Bad Request: workspace .* is not a directory$/);

  const { id } = await open(s);
  await assert.rejects(
    s.client.answerApproval(id, "nope", "once"),
    (error: unknown) =>
      error instanceof AmberApiError && error.status === 404 &&
      error.problem.field === "requestId",
  );
  // An unknown session refuses its event stream before any event.
  await assert.rejects(
    readUntil(s.client.events("missing"), "end"),
    (error: unknown) => error instanceof AmberApiError && error.status === 404,
  );
});

Deno.test("client: plugins are listed, disabled with or without a dry run, and enabled", async () => {
  await using s = await serve([]);
  const { id } = await open(s);
  const plugins = await s.client.plugins(id);
  const target = plugins.find((p) => p.state === "active");
  assert.ok(target, "a bundled plugin is active");
  const dry = await s.client.disablePlugin(id, target.id, { dryRun: true, cascade: true });
  assert.equal(dry.plan.pluginId, target.id);
  assert.equal(dry.plan.plugins.at(-1)?.pluginId, target.id, "the plugin itself goes last");
  assert.equal(dry.state, undefined, "a dry run changes nothing");
  assert.equal((await s.client.plugins(id)).find((p) => p.id === target.id)?.state, "active");
  const applied = await s.client.disablePlugin(id, target.id, { cascade: true });
  assert.deepEqual(applied.plan, dry.plan);
  assert.equal(applied.state, "disabled");
  assert.equal((await s.client.plugins(id)).find((p) => p.id === target.id)?.state, "disabled");
  assert.deepEqual(await s.client.enablePlugin(id, target.id), { id: target.id, state: "active" });
  await assert.rejects(
    s.client.enablePlugin(id, "no-such-plugin"),
    (error: unknown) => error instanceof AmberApiError && error.problem.field === "pluginId",
  );
});

Deno.test("client: aborting the signal ends the event iteration quietly; cancel ends a turn", async () => {
  await using s = await serve([
    { toolCalls: [{ name: "bash", arguments: { command: "echo never" } }] },
  ]);
  const { id } = await open(s, "ask");
  const controller = new AbortController();
  const seen: string[] = [];
  const reading = (async () => {
    for await (const event of s.client.events(id, { signal: controller.signal })) {
      seen.push(event.type);
      if (event.type === "approval") await s.client.cancel(id);
      if (event.type === "end") {
        assert.deepEqual((event.data as { cause: unknown }).cause, { kind: "cancelled" });
        controller.abort();
      }
    }
  })();
  await s.client.prompt(id, { text: "hi" });
  await reading;
  assert.equal(seen.at(-1), "end");
  assert.ok(seen.includes("approval"));
});

Deno.test("parseEvents: events split anywhere across chunks, CRLF, comments and multi-line data", async () => {
  const text = ': keep-alive\r\n\r\nid: 7\r\nevent: text\r\ndata: {"a":\r\ndata: 1}\r\n\r\n' +
    'data: {"type":"x"}\n\nid: nine\nevent: end\ndata: {}\n\n';
  const bytes = new TextEncoder().encode(text);
  for (const size of [1, 2, 3, 7, bytes.length]) {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
        controller.close();
      },
    });
    assert.deepEqual(await Array.fromAsync(parseEvents(stream)), [
      { offset: 7, type: "text", data: { a: 1 } },
      // The last id stands for the events that name none, and a bad id is ignored.
      { offset: 7, type: "message", data: { type: "x" } },
      { offset: 7, type: "end", data: {} },
    ], `chunks of ${size}`);
  }
});

Deno.test("client: a base URL's path is kept, and an error without problem+json still throws", async () => {
  const asked: string[] = [];
  const client = new AmberClient({
    baseUrl: "http://127.0.0.1:1/amber",
    token: "t",
    fetch: (input, init) => {
      asked.push(`${init?.method} ${input}`);
      return Promise.resolve(
        new Response("bad gateway\n", { status: 502, statusText: "Bad Gateway" }),
      );
    },
  });
  const error = await client.session("a b").then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof AmberApiError);
  assert.deepEqual(error.problem, {
    type: "about:blank",
    title: "Bad Gateway",
    status: 502,
    detail: "bad gateway",
  });
  assert.ok(error.cause instanceof SyntaxError, "the body that was not JSON is the cause");
  assert.deepEqual(asked, ["GET http://127.0.0.1:1/amber/sessions/a%20b"]);
});

Deno.test("client: a signal aborted before the stream opens ends the iteration quietly", async () => {
  const client = new AmberClient({
    baseUrl: "http://127.0.0.1:1",
    token: "t",
    fetch: (_input, init) => Promise.reject(init?.signal?.reason ?? new Error("not aborted")),
  });
  const controller = new AbortController();
  controller.abort();
  assert.deepEqual(await Array.fromAsync(client.events("s", { signal: controller.signal })), []);
  await assert.rejects(Array.fromAsync(client.events("s")), { message: "not aborted" });
});

Deno.test("client: its methods cover every operation of openapi.json", async () => {
  const doc = JSON.parse(
    await Deno.readTextFile(new URL("../../cli/serve/openapi.json", import.meta.url)),
  ) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).filter((key) => key !== "parameters").map((m) => `${m.toUpperCase()} ${path}`)
  ).sort();
  const asked = new Set<string>();
  const client = new AmberClient({
    baseUrl: "http://127.0.0.1:1",
    token: "t",
    fetch: (input, init) => {
      const path = new URL(String(input)).pathname.replace("/sessions/S", "/sessions/{id}")
        .replace("/approvals/R", "/approvals/{requestId}").replace(
          "/plugins/P",
          "/plugins/{pluginId}",
        );
      asked.add(`${init?.method} ${path}`);
      return Promise.resolve(new Response("{}", { status: 200 }));
    },
  });
  await client.createSession({ workspace: "/" });
  await client.sessions();
  await client.session("S");
  await client.deleteSession("S");
  await client.transcript("S");
  await client.prompt("S", { text: "x" });
  await Array.fromAsync(client.events("S"));
  await client.answerApproval("S", "R", "deny");
  await client.cancel("S");
  await client.plugins("S");
  await client.enablePlugin("S", "P");
  await client.disablePlugin("S", "P");
  await client.openApi();
  assert.deepEqual([...asked].sort(), documented);
});
