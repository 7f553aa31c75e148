/**
 * `@amber/cli/session`: one agent session, without the terminal UI. An {@linkcode AgentSession}
 * owns what lives longer than a step of a run: the provider (resolved once; switched through
 * the session), the session file (created, resumed, a torn last line moved aside), the approvals
 * answered "always", the sub-agents of the `task` tool (each with its own file
 * `<parent>-taskN`, unable to start more), token and dollar totals and allowance readouts, the
 * model catalog's figures of the model in use (its window decides when the kernel compacts; its
 * prices give each `usage` event its `cost`), compaction on request (`compact`), and one stream
 * of {@linkcode SessionEvent}s. `amber run`, `amber demo` and the interactive session are front
 * ends over it: they render its events and answer its questions (approval, cancel).
 *
 * The provider keys the session knows of are redacted from its events, from the tool results the
 * model is sent and from its file, so no front end has to; a session file has one writer at a
 * time (a second session resuming it is refused with a {@linkcode SessionBusyError}).
 *
 * @example A turn against amber's fake provider on loopback
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { AgentSession, type SessionEvent } from "@amber/cli/session";
 * import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
 *
 * await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
 * server.script({ text: "Hello from the fake model." });
 * const configDir = await Deno.makeTempDir();
 * const session = await AgentSession.open({
 *   openHost: (services) => openHost({ ...services, configDir, workspace: configDir }),
 *   overrides: { provider: "openai", model: "fake-model", baseUrl: `${server.url}/v1` },
 *   env: () => "sk-fake-key",
 * });
 * const events: SessionEvent["type"][] = [];
 * session.subscribe((event) => events.push(event.type));
 * const result = await session.turn("Say hello.");
 * assert.equal(result.cause.kind, "completed");
 * assert.equal(result.messages.at(-1)?.content, "Hello from the fake model.");
 * assert.deepEqual([events[0], events.at(-1)], ["session", "end"]);
 * assert.match(session.id ?? "", /^\d{8}-\d{6}-/);
 * session.close();
 * await session.host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 *
 * @module
 */

export { AgentSession } from "./session.ts";
export type {
  AgentSessionOptions,
  ApprovalHandler,
  CompactionOutcome,
  SessionHostServices,
  TurnOptions,
} from "./session_types.ts";
export {
  describeEnd,
  exitCodeOf,
  type SessionEvent,
  type SessionListener,
  type SessionNotice,
  type UsageEvent,
} from "./events.ts";
export { type CompactionEvent, describeCompaction, dollars, tokenCount } from "./figures.ts";
export { DEFAULT_COMPACT_AT } from "./budget.ts";
export { type ProviderResolution, providerSnapshot, resolveProviderFor } from "./provider.ts";
export { SessionBusyError } from "./session_lock.ts";
export { HeldDiagnostics } from "./held_diagnostics.ts";
export {
  type ListedRule,
  originName,
  type PermissionSources,
  type RuleOrigin,
  SessionPermissions,
} from "./permissions.ts";
export {
  AMBER_STATE_ENTRIES,
  type HostGate,
  type ProtectedGateOptions,
  ProtectedPaths,
  protectedPathsGate,
  type ProtectedPathsOptions,
} from "./protected_paths.ts";
