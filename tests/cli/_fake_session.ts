// An AgentSession on the real host and bundled plugins against the fake provider on loopback
// (OpenAI protocol), in a config directory and workspace of its own that disposing removes.

import type { ApprovalPolicy } from "@amber/core";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { openHost } from "../../cli/host.ts";
import { AgentSession, type SessionEvent } from "../../cli/session/mod.ts";

/** What {@linkcode openFakeSession} opened. */
export interface FakeSession extends AsyncDisposable {
  readonly session: AgentSession;
  readonly server: FakeProvider;
  readonly configDir: string;
  /** Every event the session emitted, in order. */
  readonly events: SessionEvent[];
}

/** How {@linkcode openFakeSession} opens it. */
export interface FakeSessionOptions {
  /** Written as config.yaml (JSON is YAML). */
  readonly config?: Record<string, unknown>;
  /** The key OPENAI_API_KEY holds. */
  readonly key?: string;
  /** The model; `fake-model` by default. */
  readonly model?: string;
  /** `--provider`; config.yaml's or the default otherwise. */
  readonly provider?: string;
  /** The approval policy. */
  readonly approval?: ApprovalPolicy;
}

/** Opens a session whose provider answers with `turns`. */
export async function openFakeSession(
  turns: readonly ScriptedTurn[],
  options: FakeSessionOptions = {},
): Promise<FakeSession> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-session-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-session-ws-" });
  if (options.config !== undefined) {
    await Deno.writeTextFile(`${configDir}/config.yaml`, JSON.stringify(options.config));
  }
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...turns);
  const key = options.key ?? "sk-fake-session-key";
  const session = await AgentSession.open({
    openHost: (services) => openHost({ ...services, configDir, workspace, thirdParty: false }),
    overrides: {
      model: options.model ?? "fake-model",
      baseUrl: `${server.url}/v1`,
      ...(options.provider === undefined ? {} : { provider: options.provider }),
    },
    env: (name) => name === "OPENAI_API_KEY" ? key : undefined,
    ...(options.approval === undefined ? {} : { approval: options.approval }),
  });
  const events: SessionEvent[] = [];
  session.subscribe((event) => events.push(event));
  return {
    session,
    server,
    configDir,
    events,
    async [Symbol.asyncDispose]() {
      session.close();
      await session.host.close();
      await server.close();
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}
