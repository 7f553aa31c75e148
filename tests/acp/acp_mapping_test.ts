// How amber's tool calls, prompts and commands map onto ACP's shapes, without a subprocess.

import assert from "node:assert/strict";
import { promptText } from "../../cli/acp/prompt_text.ts";
import { availableCommands } from "../../cli/acp/slash_commands.ts";
import {
  toolCallEnded,
  toolCallStarted,
  toolKind,
  toolLocations,
} from "../../cli/acp/tool_calls.ts";

Deno.test("toolKind: amber's tools get their ACP kinds, any other is other", () => {
  const kinds = ["read", "edit", "write", "bash", "search", "fetch", "todowrite", "greet"].map(
    toolKind,
  );
  assert.deepEqual(kinds, ["read", "edit", "edit", "execute", "search", "fetch", "think", "other"]);
  // A name inherited from Object.prototype is no tool of amber's.
  assert.equal(toolKind("constructor"), "other");
});

Deno.test("toolLocations: paths of every spelling, absolute ones kept, non-objects none", () => {
  assert.deepEqual(toolLocations('{"file_path":"./src/a.ts","path":"/etc/x"}', "/w/"), [
    { path: "/etc/x" },
    { path: "/w/src/a.ts" },
  ]);
  assert.deepEqual(toolLocations('["a.ts"]', "/w"), []);
  assert.deepEqual(toolLocations('{"path":""}', "/w"), []);
  assert.deepEqual(toolLocations("null", "/w"), []);
});

Deno.test("toolCallStarted: in progress, titled by the summary (else the name), raw input", () => {
  const call = { id: "c9", name: "bash", arguments: '{"command":"ls"}' };
  assert.deepEqual(toolCallStarted(call, "", "/w"), {
    sessionUpdate: "tool_call",
    toolCallId: "c9",
    title: "bash",
    kind: "execute",
    status: "in_progress",
    locations: [],
    rawInput: { command: "ls" },
  });
  const torn = toolCallStarted({ ...call, arguments: "{" }, "ls", "/w");
  assert.equal(torn.sessionUpdate === "tool_call" && torn.rawInput, "{");
});

Deno.test("toolCallEnded: a failure says its error and is failed; no output, no content", () => {
  const call = { id: "c1", name: "read", arguments: "{}" };
  assert.deepEqual(toolCallEnded(call, { ok: false, output: "", error: "no such file" }, "/w"), {
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    status: "failed",
    content: [{ type: "content", content: { type: "text", text: "no such file" } }],
  });
  const quiet = toolCallEnded(call, { ok: true, output: "" }, "/w");
  assert.deepEqual(quiet.sessionUpdate === "tool_call_update" && quiet.content, []);
});

Deno.test("promptText: blobs, images and audio are named, not dropped", () => {
  const text = promptText([
    { type: "resource", resource: { uri: "file:///w/x.png", blob: "AAAA" } },
    { type: "image", data: "AAAA", mimeType: "image/png" },
    { type: "audio", data: "AAAA", mimeType: "audio/wav" },
    { type: "resource_link", uri: "https://example.com/doc", name: "doc" },
    { type: "resource_link", uri: "file:///w/with%20space.ts", name: "with space.ts" },
  ]);
  assert.deepEqual(text.split("\n\n"), [
    "[binary resource: file:///w/x.png]",
    "[an image (not sent: amber takes text)]",
    "[an audio clip (not sent: amber takes text)]",
    "[file: https://example.com/doc]",
    "[file: /w/with space.ts]",
  ]);
});

Deno.test("availableCommands: a command without subcommands has no input hint", () => {
  const root = {
    name: "compact",
    path: "",
    help: "",
    man: "",
    owner: "core",
    action: "core.compact",
    children: [],
  };
  assert.deepEqual(availableCommands([root]), [{ name: "compact", description: "/compact" }]);
});
