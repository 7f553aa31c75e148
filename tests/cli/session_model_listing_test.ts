// A model the snapshot and config.yaml do not describe (a local server's): the session asks the
// provider's `/models` for its window in the background. The turn does not wait for the answer
// (a cloud API's listing can take seconds); the kernel reads the window before each request, so
// the answer counts from the request after it arrived.

import assert from "node:assert/strict";
import { openHost } from "../../cli/host.ts";
import { AgentSession, type SessionEvent } from "../../cli/session/mod.ts";

const SSE = { "content-type": "text/event-stream" };

function sse(...chunks: unknown[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n";
}

Deno.test("the provider's model listing is not waited for; its window counts once it arrives", async () => {
  const firstChat = Promise.withResolvers<void>();
  const listed = Promise.withResolvers<void>();
  const order: string[] = [];
  let chats = 0;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/v1/models") {
        order.push("models asked");
        // Held until the turn's first request is in: a turn that waited for it would hang here.
        await firstChat.promise;
        order.push("models answered");
        listed.resolve();
        return Response.json({ data: [{ id: "local-model", context_length: 32_768 }] });
      }
      await req.text();
      chats++;
      order.push(`chat ${chats}`);
      if (chats === 1) {
        firstChat.resolve();
        await listed.promise;
        // The listing's answer is parsed and kept on the session's side before the next request.
        await new Promise((resolve) => setTimeout(resolve, 100));
        return new Response(
          sse(
            {
              choices: [{
                index: 0,
                delta: {
                  role: "assistant",
                  tool_calls: [{
                    index: 0,
                    id: "c1",
                    type: "function",
                    function: { name: "read", arguments: '{"path":"notes.txt"}' },
                  }],
                },
                finish_reason: null,
              }],
            },
            { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
          ),
          { headers: SSE },
        );
      }
      return new Response(
        sse(
          {
            choices: [{
              index: 0,
              delta: { role: "assistant", content: "Done." },
              finish_reason: null,
            }],
          },
          { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        ),
        { headers: SSE },
      );
    },
  );
  const configDir = await Deno.makeTempDir({ prefix: "amber-listing-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-listing-ws-" });
  await Deno.writeTextFile(`${workspace}/notes.txt`, "hello\n");
  const session = await AgentSession.open({
    openHost: (services) => openHost({ ...services, configDir, workspace, thirdParty: false }),
    overrides: {
      provider: "llamacpp",
      model: "local-model",
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    },
    env: () => undefined,
    approval: "auto",
  });
  try {
    const events: SessionEvent[] = [];
    session.subscribe((event) => events.push(event));
    const result = await session.turn("Read notes.txt.");
    assert.equal(result.cause.kind, "completed");
    const requests = events.flatMap((e) => e.type === "request" ? [e] : []);
    assert.equal(requests.length, 2);
    assert.equal(requests[0].contextWindow, undefined, "the first request went before the answer");
    assert.equal(requests[1].contextWindow, 32_768);
    assert.deepEqual(order, ["models asked", "chat 1", "models answered", "chat 2"]);
    assert.equal(session.info.contextWindow, 32_768);
  } finally {
    session.close();
    await session.host.close();
    await Deno.remove(configDir, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
