import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import type { HookInput, Message, Tool, ToolResult } from "@amber/core";
import { MCP_MENTION, mcpAttachmentHook, mcpResourceTools } from "../../mcp/resources.ts";
import { MCP_OUTPUT_CAP, type McpToolPolicy } from "../../mcp/tool_mapping.ts";
import {
  type FeatureServer,
  featureServer,
  type FeatureServerOptions,
  PNG,
  README,
} from "./_feature_server.ts";

const POLICY: McpToolPolicy = { trustReadOnly: false, timeoutMs: 5_000, outputCap: MCP_OUTPUT_CAP };

async function withServer(
  test: (server: FeatureServer) => Promise<void>,
  options: FeatureServerOptions = {},
): Promise<void> {
  const server = await featureServer(options);
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

function tools(
  server: FeatureServer,
  policy: Partial<McpToolPolicy> = {},
): { list: Tool; read: Tool } {
  const [list, read] = mcpResourceTools("memo", server.client, { ...POLICY, ...policy });
  return { list, read };
}

function run(tool: Tool, args: unknown): Promise<ToolResult> {
  return Promise.resolve(tool.execute(args, { signal: new AbortController().signal }));
}

const LISTING = [
  "Resources of the MCP server 'memo':",
  "memo://readme - readme (text/plain): About memo.",
  "memo://logo.png - logo (image/png)",
  "memo://data.bin - data (application/octet-stream)",
  "memo://broken - broken (text/plain)",
  'memo://notes/1 - note 1 "The first note" (text/plain)',
  "",
  "Resource templates (fill in the {placeholders} to make a URI):",
  "memo://notes/{id} - notes (text/plain): A note by id.",
];

Deno.test("mcpResourceTools: names, and approval only for reading unless trusted", () =>
  withServer(async (server) => {
    const { list, read } = tools(server);
    strictEqual(list.name, "mcp__memo__list_resources");
    strictEqual(read.name, "mcp__memo__read_resource");
    strictEqual(list.readOnly, true);
    strictEqual(read.readOnly, true);
    strictEqual(await list.requiresApproval?.({}), false);
    strictEqual(await read.requiresApproval?.({ uri: "memo://readme" }), true);
    strictEqual(await tools(server, { trustReadOnly: true }).read.requiresApproval?.({}), false);
    strictEqual(read.summarize?.({ uri: "memo://readme" }), "memo read memo://readme");
  }));

Deno.test("mcpResourceTools: the listing has the resources, then the templates", () =>
  withServer(async (server) => {
    deepStrictEqual(await run(tools(server).list, {}), { ok: true, output: LISTING.join("\n") });
  }));

Deno.test("mcpResourceTools: the listing follows the server's pages", () =>
  withServer(async (server) => {
    deepStrictEqual(await run(tools(server).list, {}), { ok: true, output: LISTING.join("\n") });
  }, { pageSize: 2 }));

function more(cursor: string): string[] {
  return ["", `[more: call mcp__memo__list_resources with cursor "${cursor}" for the rest]`];
}

Deno.test("mcpResourceTools: a listing past the cap gives a cursor that goes on", () =>
  withServer(async (server) => {
    const { list } = tools(server, { outputCap: 60 });
    const pages = [];
    for (const cursor of [undefined, "r0:2", "r0:4"]) {
      pages.push((await run(list, cursor === undefined ? {} : { cursor })).output.split("\n"));
    }
    deepStrictEqual(pages, [
      [LISTING[0], ...LISTING.slice(1, 3), ...more("r0:2")],
      [LISTING[0], ...LISTING.slice(3, 5), ...more("r0:4")],
      [LISTING[0], LISTING[5], ...LISTING.slice(6)],
    ]);
  }, { pageSize: 2 }));

Deno.test("mcpResourceTools: a cut inside a server's page goes on from the same entry", () =>
  withServer(async (server) => {
    const { list } = tools(server, { outputCap: 60 });
    const pages = [];
    for (const cursor of [undefined, "r2:", "r4:"]) {
      pages.push((await run(list, cursor === undefined ? {} : { cursor })).output.split("\n"));
    }
    deepStrictEqual(pages, [
      [LISTING[0], ...LISTING.slice(1, 3), ...more("r2:")],
      [LISTING[0], ...LISTING.slice(3, 5), ...more("r4:")],
      [LISTING[0], LISTING[5], ...LISTING.slice(6)],
    ]);
    const templates = await run(tools(server, { outputCap: 1 }).list, { cursor: "t0:" });
    deepStrictEqual(templates.output.split("\n"), LISTING.slice(7));
    const done = await run(list, { cursor: "r9:" });
    deepStrictEqual(done.output.split("\n"), LISTING.slice(7));
    deepStrictEqual(await run(list, { cursor: "page 2" }), {
      ok: false,
      output: "",
      error: "'page 2' is not a cursor that mcp__memo__list_resources gave; call it without one",
    });
  }));

Deno.test("mcpResourceTools: reading gives text, images as images, and a line for a blob", () =>
  withServer(async (server) => {
    const { read } = tools(server);
    deepStrictEqual(await run(read, { uri: "memo://readme" }), { ok: true, output: README });
    deepStrictEqual(await run(read, { uri: "memo://notes/7" }), { ok: true, output: "note 7" });
    deepStrictEqual(await run(read, { uri: "memo://logo.png" }), {
      ok: true,
      output: "(memo://logo.png is an image)",
      images: [{ mimeType: "image/png", data: PNG }],
    });
    deepStrictEqual(await run(read, { uri: "memo://data.bin" }), {
      ok: true,
      output: "[memo://data.bin: application/octet-stream data, 6 bytes, not shown]",
    });
    const capped = await run(tools(server, { outputCap: 10 }).read, { uri: "memo://readme" });
    strictEqual(
      capped.output,
      `${README.slice(0, 10)}\n[output cut: 10 of ${README.length} characters shown]`,
    );
  }));

Deno.test("mcpResourceTools: a failed read is an error result with the server's reason", () =>
  withServer(async (server) => {
    const { read } = tools(server);
    const broken = await run(read, { uri: "memo://broken" });
    strictEqual(broken.ok, false);
    match(broken.error ?? "", /the disk is gone/);
    const missing = await run(read, { uri: "memo://nothing" });
    strictEqual(missing.ok, false);
    match(missing.error ?? "", /memo:\/\/nothing/);
  }));

function hookInput(transcript: readonly Message[]): HookInput {
  return { point: "StepStart", step: 0, transcript, state: new Map() };
}

Deno.test("mcpAttachmentHook: mentions of its server are read and attached once", () =>
  withServer(async (server) => {
    const hook = mcpAttachmentHook("memo", server.client, 5_000);
    strictEqual(hook.point, "StepStart");
    strictEqual(hook.name, "mcp.memo.attachments");
    const prompt: Message = {
      role: "user",
      content: "Compare @memo:memo://readme with @MEMO:memo://notes/2, " +
        "not @other:memo://readme; again @memo:memo://readme. And @memo:memo://broken",
    };
    const reaction = await hook.run(hookInput([{ role: "system", content: "sys" }, prompt]));
    const attached: Message = {
      role: "user",
      content: [
        `<mcp_resource server="memo" uri="memo://readme">\n${README}\n</mcp_resource>`,
        '<mcp_resource server="memo" uri="memo://notes/2">\nnote 2\n</mcp_resource>',
        '<mcp_resource server="memo" uri="memo://broken">\n' +
        "[could not read it: MCP error -32603: the disk is gone]\n</mcp_resource>",
      ].join("\n\n"),
    };
    deepStrictEqual(reaction, { messages: [attached] });
    // The next step: the model has answered, so the prompt is not read again.
    const later = [prompt, attached, { role: "assistant" as const, content: "ok" }];
    deepStrictEqual(await hook.run(hookInput(later)), {});
    // Nor does a hook search an attachment message, its own or another server's.
    deepStrictEqual(await hook.run(hookInput([attached])), {});
  }));

Deno.test("mcpAttachmentHook: a new prompt after an answer is read; an image is noted", () =>
  withServer(async (server) => {
    const hook = mcpAttachmentHook("memo", server.client, 5_000);
    const transcript: Message[] = [
      { role: "user", content: "@memo:memo://readme" },
      { role: "assistant", content: "read it" },
      { role: "user", content: "now (@memo:memo://logo.png)" },
    ];
    deepStrictEqual(await hook.run(hookInput(transcript)), {
      messages: [{
        role: "user",
        content: '<mcp_resource server="memo" uri="memo://logo.png">\n' +
          "[memo://logo.png: image/png, 70 bytes, left out: an image cannot go in this message]\n" +
          "</mcp_resource>",
      }],
    });
    deepStrictEqual(await hook.run(hookInput([{ role: "user", content: "mail a@memo:x" }])), {});
  }));

Deno.test("MCP_MENTION: where a mention starts and ends", () => {
  const mentions = (text: string) =>
    [...text.matchAll(MCP_MENTION)].map((m) => `${m.groups?.server}|${m.groups?.uri}`);
  deepStrictEqual(mentions("@fs:file:///a.md"), ["fs|file:///a.md"]);
  deepStrictEqual(mentions("see @fs:file:///a.md, then (@db:sql://t/1)."), [
    "fs|file:///a.md",
    "db|sql://t/1",
  ]);
  deepStrictEqual(mentions("me@fs:file:///a.md @fs: @:x @fs:x?"), ["fs|x"]);
  deepStrictEqual(mentions('"@my-server_2:note://a%20b"'), ["my-server_2|note://a%20b"]);
  deepStrictEqual(mentions("line\n@s:u://q?x=1&y=2"), ["s|u://q?x=1&y=2"]);
});
