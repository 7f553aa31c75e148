// The fixture of the `amber serve` tests: a server on 127.0.0.1 with the real hosts and the
// bundled plugins (or the test's own) against the fake provider on loopback, a config directory
// and workspaces of its own, and readers of a session's Server-Sent Events.

import assert from "node:assert/strict";
import { makeBundledPlugins } from "@amber/plugins";
import {
  FakeProvider,
  openaiEncoder,
  type RecordedRequest,
  type ScriptedTurn,
} from "@amber/providers/testing";
import { type Server, type ServerOptions, startServer } from "../../cli/serve/server.ts";

/** The bearer token of the fixture's server. */
export const TOKEN = "serve-test-token";
const KEY = "sk-serve-test-4242";

/** A server, its config directory, and what the tests do with it. */
export interface Served extends AsyncDisposable {
  /** The running server. */
  readonly server: Server;
  /** Its config directory (removed with the rest). */
  readonly configDir: string;
  /** A new workspace (removed with the rest) and a fake provider answering with `turns`. */
  workspace(turns: readonly ScriptedTurn[]): Promise<{ workspace: string; baseUrl: string }>;
  /** The chat requests every fake provider of the fixture received, oldest first per provider. */
  requests(): RecordedRequest[];
  /** A request to the server with `body` as JSON, carrying the token (or `token`). */
  call(method: string, path: string, body?: unknown, token?: string): Promise<Response>;
}

/**
 * Starts a server on a config directory of its own; `configYaml`, when given, is written as its
 * config.yaml first.
 */
export async function serve(
  options: Partial<Omit<ServerOptions, "token" | "configDir">> & { configYaml?: string } = {},
): Promise<Served> {
  const { configYaml, ...rest } = options;
  const configDir = await Deno.makeTempDir({ prefix: "amber-serve-" });
  if (configYaml !== undefined) await Deno.writeTextFile(`${configDir}/config.yaml`, configYaml);
  const server = await startServer({
    token: TOKEN,
    plugins: makeBundledPlugins,
    configDir,
    thirdParty: false,
    env: (name) => name === "OPENAI_API_KEY" ? KEY : undefined,
    ...rest,
  });
  const providers: FakeProvider[] = [];
  const dirs: string[] = [configDir];
  return {
    server,
    configDir,
    async workspace(turns) {
      const workspace = await Deno.makeTempDir({ prefix: "amber-serve-ws-" });
      dirs.push(workspace);
      const provider = await FakeProvider.start({ encoders: [openaiEncoder] });
      provider.script(...turns);
      providers.push(provider);
      return { workspace, baseUrl: `${provider.url}/v1` };
    },
    requests() {
      return providers.flatMap((provider) => provider.chats);
    },
    call(method, path, body, token = TOKEN) {
      return fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    },
    async [Symbol.asyncDispose]() {
      await server.close();
      for (const provider of providers) await provider.close();
      for (const dir of dirs) await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Creates a session on a new workspace whose fake provider answers `turns`; its id. */
export async function created(
  s: Served,
  turns: readonly ScriptedTurn[],
  extra = {},
): Promise<string> {
  const { workspace, baseUrl } = await s.workspace(turns);
  const response = await s.call("POST", "/sessions", {
    workspace,
    provider: "openai",
    model: "fake-model",
    baseUrl,
    ...extra,
  });
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  assert.deepEqual(body, { id: body.id, workspace, provider: "openai", model: "fake-model" });
  return body.id;
}

/** One Server-Sent Event of a session's stream. */
export interface Sse {
  readonly id: number;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Opens a session's event stream: once it answers, the server follows the session's log. */
export async function openEvents(
  s: Served,
  id: string,
  headers: Record<string, string> = {},
  query = "",
): Promise<Response> {
  const response = await fetch(`${s.server.url}/sessions/${id}/events${query}`, {
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  return response;
}

/** Reads an event stream until `until` holds for an event, then disconnects. */
export async function readUntil(
  response: Response,
  until: (event: Sse) => boolean,
): Promise<Sse[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const seen: Sse[] = [];
  let buffer = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return seen;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name: string) =>
          block.split("\n").find((line) => line.startsWith(`${name}: `))!.slice(name.length + 2);
        const event = {
          id: Number(field("id")),
          event: field("event"),
          data: JSON.parse(field("data")),
        };
        seen.push(event);
        if (until(event)) return seen;
      }
    }
  } finally {
    await reader.cancel();
  }
}

/** Reads a session's event stream until `until` holds for an event, then disconnects. */
export async function readEvents(
  s: Served,
  id: string,
  until: (event: Sse) => boolean,
  headers: Record<string, string> = {},
  query = "",
): Promise<Sse[]> {
  return await readUntil(await openEvents(s, id, headers, query), until);
}

/** Whether the event ends a turn. */
export const isEnd = (event: Sse): boolean => event.event === "end";
/** How a turn ended, from its `end` event. */
export const kindOf = (event: Sse | undefined): string | undefined =>
  (event?.data.cause as { kind?: string } | undefined)?.kind;

/** The response, its body discarded. */
export async function drained(response: Response): Promise<Response> {
  await response.body?.cancel();
  return response;
}
