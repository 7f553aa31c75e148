// Agents from markdown, end to end in a session against the fake provider: the `task` tool offers
// them, and a task for one runs a sub-agent whose requests carry its system prompt, only its
// tools and its model; a call outside its tools is blocked; `/agents` lists them; careless files
// (a tool that does not exist, a pattern matching nothing, one name twice) say what happened.

import assert from "node:assert/strict";
import type {
  AgentDefinition,
  PluginServices,
  SubagentRunOptions,
  SubagentService,
} from "@amber/core";
import { createToolTaskPlugin } from "@amber/plugins/tool_task";
import type { ScriptedTurn } from "@amber/providers/testing";
import { agentRequest, agentTools } from "../../cli/session/agent_runs.ts";
import { tempDir } from "../_helpers.ts";
import { runAmber } from "../cli/_subprocess.ts";
import { markdown, openFilesSession, seen } from "./_files_session.ts";

const REVIEWER = {
  "ws/.amber/agents/reviewer.md": markdown(
    [
      "name: reviewer",
      "description: Reviews a change for bugs.",
      "tools: [read, search]",
      "model: small-model",
    ],
    "You are a meticulous reviewer. Report bugs only.",
  ),
};

const task = (agent: string, prompt = "review notes.txt"): ScriptedTurn => ({
  toolCalls: [{ name: "task", arguments: { prompt, agent } }],
});

Deno.test("a task for an agent runs with its system prompt, only its tools and its model", async () => {
  const files = {
    ...REVIEWER,
    "ws/.amber/skills/deploy/SKILL.md": markdown(["description: Deploy it."], "Deploy."),
  };
  await using s = await openFilesSession(files, [
    task("reviewer"),
    // The sub-agent: it tries bash, which is not its tool, then answers.
    { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] },
    { text: "no bugs" },
    // The parent again.
    { text: "the reviewer found no bugs" },
  ], { approval: "auto" });
  const result = await s.session.turn("get it reviewed");
  assert.equal(result.cause.kind, "completed");
  const parent = seen(s.server, 0);
  assert.equal(parent.model, "fake-model");
  const offered = parent.tool("task");
  assert.deepEqual(offered?.parameters.properties.agent.enum, ["reviewer"]);
  assert.match(offered?.description ?? "", /- reviewer: Reviews a change for bugs\./);
  const sub = seen(s.server, 1);
  assert.equal(sub.model, "small-model");
  assert.deepEqual(sub.tools, ["read", "search"]);
  assert.match(sub.system, /^You are a meticulous reviewer\. Report bugs only\./);
  assert.doesNotMatch(sub.system, /You are amber/);
  assert.match(parent.system, /- deploy: Deploy it\./);
  assert.doesNotMatch(sub.system, /deploy/, "no skills for an agent that cannot load them");
  assert.match(
    seen(s.server, 2).results[0],
    /the agent 'reviewer' may not call bash; it may call: read, search/,
  );
  assert.equal(seen(s.server, 3).results[0], "no bugs");
});

Deno.test("without an agent the sub-agent is amber's general one; an unknown agent is refused", async () => {
  await using s = await openFilesSession(REVIEWER, [
    { toolCalls: [{ name: "task", arguments: { prompt: "look around" } }] },
    { text: "looked" },
    task("nobody"),
    { text: "done" },
  ], { approval: "auto" });
  await s.session.turn("delegate");
  const general = seen(s.server, 1);
  assert.equal(general.model, "fake-model");
  assert.match(general.system, /You are amber/);
  assert.ok(general.tools.includes("bash"));
  // The enum keeps the model to the names defined.
  assert.match(
    seen(s.server, 3).results.at(-1)!,
    /invalid arguments for tool 'task': agent: .*does not match any of \["reviewer"\]/,
  );
});

Deno.test("a .claude/ agent with Claude Code's tool names and model alias works unchanged", async () => {
  await using s = await openFilesSession({
    "ws/.claude/agents/explorer.md": markdown(
      [
        "name: explorer",
        "description: Explores the code base.",
        "tools: Read, Grep, Glob, WebFetch",
        "model: sonnet",
      ],
      "You explore code.",
    ),
  }, [task("explorer", "where is main"), { text: "in main.ts" }, { text: "found" }]);
  await s.session.turn("explore");
  const sub = seen(s.server, 1);
  assert.equal(sub.model, "fake-model", "sonnet means the session's model");
  assert.deepEqual(sub.tools, ["read", "search"]);
  assert.equal(
    seen(s.server, 2).results[0],
    "in main.ts\n\n(the agent 'explorer' names tools this session does not have: WebFetch; " +
      "it ran with: read, search)",
  );
});

Deno.test("a tools pattern matching nothing leaves the agent no tools", async () => {
  await using s = await openFilesSession({
    "ws/.amber/agents/thinker.md": markdown(
      ["description: Only thinks.", "tools: nothing_*"],
      "Think.",
    ),
  }, [task("thinker", "think"), { text: "thought" }, { text: "ok" }]);
  await s.session.turn("think");
  assert.deepEqual(seen(s.server, 1).tools, []);
  assert.match(seen(s.server, 2).results[0], /names tools .*: nothing_\*; it ran with: no tools/);
});

Deno.test("one name in two folders: amber's own wins, and the other is reported", async () => {
  await using s = await openFilesSession(
    {
      ...REVIEWER,
      "ws/.claude/agents/reviewer.md": markdown(
        ["name: reviewer", "description: Claude's reviewer."],
        "CLAUDE REVIEWER",
      ),
    },
    [task("reviewer"), { text: "fine" }, { text: "ok" }],
    { approval: "auto" },
  );
  await s.session.turn("review");
  assert.match(seen(s.server, 1).system, /meticulous reviewer/);
  const reported = s.diagnostics.find((d) => d.where === "agents");
  assert.equal(reported?.pluginId, "files.agents-claude");
  assert.match(
    reported?.message ?? "",
    /\.claude\/agents\/reviewer\.md is left out: .*\.amber\/agents\/reviewer\.md defines it first/,
  );
});

Deno.test("/agents lists the agents; switching files.agents off takes them away", async () => {
  await using s = await openFilesSession(REVIEWER, []);
  const commands = s.session.host.registries.command;
  const listed = await commands.dispatch("agents", [], "");
  assert.ok(listed.ok);
  assert.match(listed.text, /^1 agent \(run one with the task tool's `agent`\):/);
  assert.match(
    listed.text,
    /reviewer: Reviews a change for bugs\.\n {2}tools: read, search; model: small-model\n {2}file: .*\.amber\/agents\/reviewer\.md/,
  );
  await s.session.host.runtime.setState("files.agents", false);
  const after = await commands.dispatch("agents", [], "");
  assert.ok(after.ok);
  assert.match(after.text, /^no agents are defined/);
});

Deno.test("a task naming an agent the tool does not know is refused, naming those it does", async () => {
  const agent: AgentDefinition = { name: "reviewer", description: "d", systemPrompt: "p" };
  const ran: (AgentDefinition | undefined)[] = [];
  const subagents: SubagentService = {
    run: (_prompt: string, options: SubagentRunOptions) => {
      ran.push(options.agent);
      return Promise.resolve("ok");
    },
    agents: () => [agent],
  };
  const [capability] = createToolTaskPlugin().capabilities();
  assert.ok(capability.kind === "tool" && typeof capability.tools === "function");
  const services = { host: { subagents } } as unknown as PluginServices;
  const [tool] = capability.tools(services);
  const signal = new AbortController().signal;
  const refused = await tool.execute({ prompt: "x", agent: "nobody" }, { signal });
  assert.equal(refused.error, "there is no agent named 'nobody'; the agents are: reviewer");
  const done = await tool.execute({ prompt: "x", agent: "reviewer" }, { signal });
  assert.equal(done.output, "ok");
  assert.deepEqual(ran, [agent]);
});

Deno.test("amber cmd agents lists them outside a session too", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await Deno.mkdir(`${workspace}/.amber/agents`, { recursive: true });
  await Deno.mkdir(`${tmp.dir}/home`);
  await Deno.writeTextFile(
    `${workspace}/.amber/agents/reviewer.md`,
    REVIEWER["ws/.amber/agents/reviewer.md"],
  );
  const result = await runAmber(`${tmp.dir}/config`, ["cmd", "agents"], {
    cwd: workspace,
    env: { INIT_CWD: workspace, HOME: `${tmp.dir}/home` },
  });
  assert.equal(result.code, 0, result.err);
  assert.match(result.out, /^1 agent .*\n\nreviewer: Reviews a change for bugs\./);
});

Deno.test("an agent file added during a session is offered from the next step", async () => {
  await using s = await openFilesSession(REVIEWER, [{ text: "one" }, { text: "two" }]);
  await s.session.turn("first");
  assert.deepEqual(seen(s.server, 0).tool("task")?.parameters.properties.agent.enum, ["reviewer"]);
  await Deno.writeTextFile(
    `${s.workspace}/.amber/agents/writer.md`,
    markdown(["description: Writes docs."], "You write docs."),
  );
  await s.session.turn("second");
  const task = seen(s.server, 1).tool("task");
  assert.deepEqual(task?.parameters.properties.agent.enum, ["reviewer", "writer"]);
  assert.match(task?.description ?? "", /- writer: Writes docs\./);
});

Deno.test("an agent file without a body keeps amber's own system prompt", () => {
  const tools = agentTools({ tools: ["read"] }, ["read", "bash"]);
  const request = agentRequest(
    {
      model: "m",
      messages: [
        { role: "system", content: "You are amber.", source: "core_system" },
        { role: "user", content: "go" },
      ],
      tools: [],
    },
    { systemPrompt: "  \n", tools },
    "/w",
  );
  assert.deepEqual(request.messages.map((m) => m.content), ["You are amber.", "go"]);
});
