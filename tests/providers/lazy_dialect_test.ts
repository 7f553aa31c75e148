// A flavor's dialect is loaded when a session speaks it, not when amber starts: the bundled
// provider plugins and core's own `openai` flavor name a factory that imports the dialect's
// module, and the client waits for it before its first request.

import { deepStrictEqual, match, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { Dialect, StreamEvent } from "@amber/core";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import { anthropicEncoder, FakeProvider } from "@amber/providers/testing";
import { openHost } from "../../cli/host.ts";
import { AgentSession } from "../../cli/session/mod.ts";
import { tempDir } from "../_helpers.ts";
import { ROOT } from "../cli/_subprocess.ts";
import { moduleGraph } from "../_module_graph.ts";

const REQUEST = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [] };

Deno.test("starting amber evaluates no dialect: the bundled plugins and core load theirs lazily", async () => {
  const dialects = /\/providers\/(openai|openai_responses|anthropic|gemini)\.ts$/;
  for (const entry of ["plugins/mod.ts", "cli/core_contributions.ts", "cli/host.ts"]) {
    deepStrictEqual(
      [...(await moduleGraph(join(ROOT, entry))).reached].filter((s) => dialects.test(s)),
      [],
      entry,
    );
  }
});

Deno.test("ProviderClient waits for a dialect given as a promise, then streams with it", async () => {
  await using server = await FakeProvider.start({ encoders: [anthropicEncoder] });
  server.script({ text: "loaded", usage: { promptTokens: 1, completionTokens: 1 } });
  const dialect = import("@amber/providers/anthropic").then((m) => m.anthropicDialect());
  const client = new ProviderClient(dialect, { baseUrl: server.url, apiKey: "sk-test" });
  const events: StreamEvent[] = [];
  const outcome = await client.stream(REQUEST, (event) => events.push(event));
  strictEqual(outcome.status, 200);
  deepStrictEqual(events.filter((e) => e.type === "text"), [{ type: "text", delta: "loaded" }]);
});

Deno.test("a dialect that fails to load fails the request that needs it, not the process", async () => {
  const broken = Promise.reject(new TypeError("Module not found: ./nowhere.ts"));
  const asked: string[] = [];
  const client = new ProviderClient(broken as Promise<Dialect>, { baseUrl: "http://127.0.0.1:9" }, {
    fetch: (input) => {
      asked.push(String(input));
      return Promise.resolve(new Response(""));
    },
  });
  // Nothing has asked yet: no unhandled rejection may end the test before this point.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const events: StreamEvent[] = [];
  const outcome = await client.stream(REQUEST, (event) => events.push(event));
  strictEqual(outcome.attempts, 0);
  deepStrictEqual(events.map((e) => e.type), ["error", "finish"]);
  const error = events[0] as Extract<StreamEvent, { type: "error" }>;
  match(error.message, /^the dialect could not be loaded: .*Module not found: \.\/nowhere\.ts/);
  strictEqual(error.retryable, false);
  await rejects(
    client.models(),
    (e) => e instanceof ProviderError && /could not be loaded/.test(e.message),
  );
  strictEqual(client.allowanceFromHeaders(new Headers()), undefined);
  deepStrictEqual(asked, []);
});

Deno.test("a session on a lazily loaded flavor (anthropic) runs a turn", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [anthropicEncoder] });
  server.script({
    text: "Hello from Claude's protocol.",
    usage: { promptTokens: 4, completionTokens: 6 },
  });
  const workspace = join(tmp.dir, "workspace");
  await Deno.mkdir(workspace);
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, configDir: join(tmp.dir, "config"), workspace, thirdParty: false }),
    overrides: { provider: "anthropic", baseUrl: server.url },
    env: (name) => name === "ANTHROPIC_API_KEY" ? "sk-ant-test" : undefined,
    approval: "deny",
  });
  try {
    session.ready();
    const result = await session.turn("hi");
    strictEqual(result.cause.kind, "completed");
    // The catalog's `/models` lookup aside, the turn is one Messages request.
    const chats = server.requests.filter((request) => request.method === "POST");
    deepStrictEqual(chats.map((request) => [request.path, request.flavor]), [
      ["/v1/messages", "anthropic"],
    ]);
  } finally {
    session.close();
    await session.host.close();
  }
});
