// An in-process agent session over a workspace laid out with markdown files (skills, agents),
// against the fake provider on loopback; the requests the model received, read back.

import type { Diagnostic } from "@amber/core";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { openHost } from "../../cli/host.ts";
import { AgentSession, type AgentSessionOptions } from "../../cli/session/mod.ts";
import { runAmber } from "../cli/_subprocess.ts";

/** A session over a laid-out workspace, disposed with its server, home and folders. */
export interface FilesSession extends AsyncDisposable {
  readonly session: AgentSession;
  readonly server: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  readonly diagnostics: Diagnostic[];
}

/**
 * Lays out `files` (paths under a temp root: `ws/` is the workspace, `config/` the config
 * directory, `home/` the home directory) and opens a session there, the model scripted with
 * `turns`. HOME points at `home/` while the session is open, so `~/.claude` is the test's.
 */
export async function openFilesSession(
  files: Record<string, string>,
  turns: readonly ScriptedTurn[],
  options: Partial<AgentSessionOptions> = {},
): Promise<FilesSession> {
  const root = await Deno.makeTempDir({ prefix: "amber-files-" });
  const configDir = `${root}/config`;
  const workspace = `${root}/ws`;
  await layout(root, { "config/.keep": "", "ws/.keep": "", "home/.keep": "", ...files });
  const home = Deno.env.get("HOME");
  Deno.env.set("HOME", `${root}/home`);
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns);
  const diagnostics: Diagnostic[] = [];
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({
        ...services,
        configDir,
        workspace,
        thirdParty: false,
        onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
      }),
    overrides: { model: "fake-model", baseUrl: `${server.url}/v1` },
    env: (name) => name === "OPENAI_API_KEY" ? "sk-files-test-2718" : undefined,
    ...options,
  });
  return {
    session,
    server,
    configDir,
    workspace,
    diagnostics,
    async [Symbol.asyncDispose]() {
      session.close();
      await session.host.close();
      await server.close();
      if (home === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", home);
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Writes `files` (paths under `root`, their folders made as needed). */
export async function layout(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    const full = `${root}/${path}`;
    await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
}

/**
 * `amber args` as a subprocess in `workspace`, with `dir/config` as its config directory and
 * `dir/home` as its home (so `~/.claude` is the test's).
 */
export function amberIn(
  dir: string,
  workspace: string,
  args: string[],
): ReturnType<typeof runAmber> {
  return runAmber(`${dir}/config`, args, {
    cwd: workspace,
    env: { INIT_CWD: workspace, HOME: `${dir}/home`, OPENAI_API_KEY: "sk-test-key-1234" },
    flags: ["--allow-run"],
    trim: false,
  });
}

/** A markdown file: frontmatter lines, then the body. */
export function markdown(frontmatter: readonly string[], body: string): string {
  return ["---", ...frontmatter, "---", body, ""].join("\n");
}

interface WireTool {
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: { readonly properties: Record<string, { readonly enum?: string[] }> };
  };
}

interface WireChat {
  readonly model: string;
  readonly messages: readonly {
    readonly role: string;
    readonly content: string | null;
    readonly tool_call_id?: string;
  }[];
  readonly tools?: readonly WireTool[];
}

/** One request the fake provider received, as the model saw it. */
export interface SeenRequest {
  readonly model: string;
  /** The system messages, joined. */
  readonly system: string;
  /** The tools offered, by name. */
  readonly tools: readonly string[];
  /** A tool's wire definition. */
  tool(name: string): WireTool["function"] | undefined;
  /** The tool results, in order. */
  readonly results: readonly string[];
}

/** Request `i` the fake provider received. */
export function seen(server: FakeProvider, i: number): SeenRequest {
  const chat = server.chats[i].body as WireChat;
  const tools = chat.tools ?? [];
  return {
    model: chat.model,
    system: chat.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n"),
    tools: tools.map((t) => t.function.name),
    tool: (name) => tools.find((t) => t.function.name === name)?.function,
    results: chat.messages.filter((m) => m.role === "tool").map((m) => m.content ?? ""),
  };
}
