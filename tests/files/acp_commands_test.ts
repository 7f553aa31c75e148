// A markdown command through the editor protocol: `amber acp` offers it with its description and
// argument hint, and `/review src` sends the expanded template to the model.

import assert from "node:assert/strict";
import { client, methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { startAmberAcp } from "../acp/_amber_acp.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("amber acp offers a markdown command and sends its expanded prompt", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/work`;
  await Deno.mkdir(`${workspace}/.amber/commands`, { recursive: true });
  await Deno.mkdir(`${tmp.dir}/home`);
  await Deno.writeTextFile(
    `${workspace}/.amber/commands/review.md`,
    "---\ndescription: Review code\nargument-hint: [path]\n---\nReview $1 for bugs.\n",
  );
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "All good." });
  const updates: SessionNotification[] = [];
  const editor = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
  await using amber = startAmberAcp(editor, {
    configDir: `${tmp.dir}/config`,
    workspace,
    baseUrl: `${server.url}/v1`,
    env: { HOME: `${tmp.dir}/home` },
  });
  await amber.agent.request(methods.agent.initialize, { protocolVersion: 1 });
  const { sessionId } = await amber.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const response = await amber.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "/review src" }],
  });
  assert.equal(response.stopReason, "end_turn");
  const offered = updates.flatMap(({ update }) =>
    update.sessionUpdate === "available_commands_update" ? update.availableCommands : []
  );
  const review = offered.find((command) => command.name === "review");
  assert.equal(review?.description, "Review code");
  assert.equal(server.chats.length, 1);
  const { messages } = server.chats[0].body as { messages: { role: string; content: string }[] };
  assert.equal(
    messages.filter((m) => m.role === "user").at(-1)?.content,
    "Review src for bugs.\n",
  );
});
