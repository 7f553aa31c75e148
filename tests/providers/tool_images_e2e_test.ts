// Images a tool returns, end to end: the kernel keeps them on the tool message and in the
// session file, each dialect puts them on its wire (as the fake provider records the request),
// a resumed session sends them again, and a model that takes no images gets a line instead.

import assert from "node:assert/strict";
import type { Dialect, Message, Tool } from "@amber/core";
import { runAgent, type RunOptions, SessionFile } from "@amber/core/kernel";
import { ProviderClient } from "@amber/providers";
import { anthropicDialect } from "@amber/providers/anthropic";
import { geminiDialect } from "@amber/providers/gemini";
import { openaiDialect } from "@amber/providers/openai";
import { openaiResponsesDialect } from "@amber/providers/openai-responses";
import {
  anthropicEncoder,
  FakeProvider,
  geminiEncoder,
  openaiEncoder,
  openaiResponsesEncoder,
  type WireEncoder,
} from "@amber/providers/testing";
import { makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

// 2000 bytes: "2 KB" in the line that replaces it.
const PNG = btoa(String.fromCharCode(...new Uint8Array(2000).map((_, i) => i % 251)));
const IMAGE = { mimeType: "image/png", data: PNG } as const;
const URL_OF_IMAGE = `data:image/png;base64,${PNG}`;
const LEFT_OUT = "[image/png image, 2 KB, not sent: this model takes no images]";

interface Wire {
  readonly name: string;
  readonly dialect: () => Dialect;
  readonly encoder: WireEncoder;
  readonly basePath: string;
  /** What the request body carries for the one tool result with the image, when it is sent. */
  readonly sent: (body: Record<string, unknown>) => void;
  /** The tool result's text in the request body, when the image is not sent. */
  readonly text: (body: Record<string, unknown>) => unknown;
}

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => value as Json[];

const WIRES: readonly Wire[] = [
  {
    name: "openai chat completions",
    dialect: openaiDialect,
    encoder: openaiEncoder,
    basePath: "/v1",
    sent: (body) => {
      const messages = list(body.messages);
      const at = messages.findIndex((m) => m.role === "tool");
      assert.deepEqual(messages[at], { role: "tool", tool_call_id: "call_1", content: "shot" });
      assert.deepEqual(messages[at + 1], {
        role: "user",
        content: [
          { type: "text", text: "The image that screenshot (call call_1) returned:" },
          { type: "image_url", image_url: { url: URL_OF_IMAGE } },
        ],
      });
    },
    text: (body) => list(body.messages).find((m) => m.role === "tool")?.content,
  },
  {
    name: "openai responses",
    dialect: openaiResponsesDialect,
    encoder: openaiResponsesEncoder,
    basePath: "/v1",
    sent: (body) => {
      const output = list(body.input).find((item) => item.type === "function_call_output");
      assert.deepEqual(output?.output, [
        { type: "input_text", text: "shot" },
        { type: "input_image", image_url: URL_OF_IMAGE },
      ]);
    },
    text: (body) => list(body.input).find((item) => item.type === "function_call_output")?.output,
  },
  {
    name: "anthropic",
    dialect: anthropicDialect,
    encoder: anthropicEncoder,
    basePath: "",
    sent: (body) => {
      const result = list(body.messages).flatMap((m) => list(m.content))
        .find((block) => block.type === "tool_result");
      assert.deepEqual(result?.content, [
        { type: "text", text: "shot" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ]);
    },
    text: (body) =>
      list(body.messages).flatMap((m) => list(m.content))
        .find((block) => block.type === "tool_result")?.content,
  },
  {
    name: "gemini",
    dialect: geminiDialect,
    encoder: geminiEncoder,
    basePath: "",
    sent: (body) => {
      const turn = list(body.contents).find((c) =>
        list(c.parts).some((part) => part.functionResponse !== undefined)
      );
      assert.deepEqual(list(turn?.parts).map((part) => Object.keys(part)[0]), [
        "functionResponse",
        "inlineData",
      ]);
      assert.deepEqual(list(turn?.parts)[1], { inlineData: { mimeType: "image/png", data: PNG } });
    },
    text: (body) => {
      const part = list(body.contents).flatMap((c) => list(c.parts))
        .find((p) => p.functionResponse !== undefined);
      return ((part?.functionResponse as Json).response as Json).output;
    },
  },
];

function screenshotTool(images: readonly { mimeType: string; data: string }[]): Tool {
  return {
    name: "screenshot",
    description: "Takes a screenshot.",
    parameters: { type: "object" },
    readOnly: true,
    execute: () => ({ ok: true, output: "shot", images }),
  };
}

async function setup(wire: Wire, images: boolean, tool: Tool = screenshotTool([IMAGE])) {
  const server = await FakeProvider.start({ encoders: [wire.encoder] });
  const { runtime } = makeRuntime();
  runtime.register(makePlugin("tools", [{ kind: "tool", name: "shots", tools: [tool] }]));
  await runtime.start();
  const model = new ProviderClient(
    wire.dialect(),
    { baseUrl: `${server.url}${wire.basePath}`, apiKey: "k", images },
    { sleep: () => Promise.resolve() },
  );
  const base: RunOptions = {
    runtime,
    model,
    modelName: "fake-small",
    prompt: "look",
    approval: "auto",
  };
  return { server, base };
}

const callScreenshot = { toolCalls: [{ id: "call_1", name: "screenshot", arguments: {} }] };

for (const wire of WIRES) {
  Deno.test(`${wire.name}: a tool's image reaches a model that takes images, and again on resume`, async () => {
    await using tmp = await tempDir();
    const { server, base } = await setup(wire, true);
    await using _ = server;
    server.script(callScreenshot, { text: "a cat" }, { text: "still a cat" });
    const session = await SessionFile.create(tmp.dir, { id: "s1", workspace: tmp.dir }, []);
    const result = await runAgent({ ...base, session });
    session.close();
    const tool = result.messages.find((m) => m.role === "tool") as Extract<
      Message,
      { role: "tool" }
    >;
    assert.deepEqual(tool.images, [IMAGE], "the tool message keeps the image");
    wire.sent(server.chats[1].body as Json);

    const loaded = await SessionFile.load(tmp.dir, "s1");
    const stored = loaded.messages.find((m) => m.role === "tool");
    assert.deepEqual(stored, tool, "the session file keeps it");
    const resumed = await SessionFile.resume(tmp.dir, "s1");
    await runAgent({
      ...base,
      session: resumed.file,
      history: resumed.session.messages,
      firstStep: resumed.session.steps.length,
      prompt: "and now?",
    });
    resumed.file.close();
    wire.sent(server.chats[2].body as Json);
  });

  Deno.test(`${wire.name}: a model that takes no images gets a line saying what was left out`, async () => {
    const { server, base } = await setup(wire, false);
    await using _ = server;
    server.script(callScreenshot, { text: "no idea" });
    await runAgent(base);
    const body = server.chats[1].body as Json;
    assert.equal(wire.text(body), `shot\n${LEFT_OUT}`);
    assert.equal(JSON.stringify(body).includes(PNG), false, "no image bytes on the wire");
  });
}

Deno.test("an image type the API does not take is left out with a line, the others are sent", async () => {
  const svg = { mimeType: "image/svg+xml", data: btoa("<svg/>") };
  const { server, base } = await setup(WIRES[2], true, screenshotTool([svg, IMAGE]));
  await using _ = server;
  server.script(callScreenshot, { text: "ok" });
  await runAgent(base);
  const result = list((server.chats[1].body as Json).messages).flatMap((m) => list(m.content))
    .find((block) => block.type === "tool_result");
  assert.deepEqual(result?.content, [
    {
      type: "text",
      text: "shot\n[image/svg+xml image, 1 KB, not sent: this API takes no image/svg+xml]",
    },
    { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
  ]);
});

Deno.test("a tool result with malformed images is refused as a whole, never put on the wire", async () => {
  const bad = screenshotTool([{ mimeType: "image/png" } as unknown as typeof IMAGE]);
  const { server, base } = await setup(WIRES[0], true, bad);
  await using _ = server;
  server.script(callScreenshot, { text: "ok" });
  const result = await runAgent(base);
  const tool = result.messages.find((m) => m.role === "tool") as Extract<Message, { role: "tool" }>;
  assert.equal(tool.isError, true);
  assert.match(tool.content, /screenshot.*instead of a ToolResult/);
  assert.equal(tool.images, undefined);
});
