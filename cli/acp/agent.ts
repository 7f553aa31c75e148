/**
 * Amber as an ACP agent: the handlers of the Agent Client Protocol over amber's one session
 * engine. Each ACP session is an {@linkcode AgentSession} on the workspace the editor names; its
 * events become `session/update` notifications, its approval questions
 * `session/request_permission` requests, and `session/cancel` aborts its running turn.
 * `session/load` resumes one of amber's saved sessions (the id `amber sessions` lists, which
 * every prompt's response also carries as `_meta.amberSession`) and replays its conversation.
 * The session's modes are amber's approval policies (`modes.ts`); its config options switch the
 * policy and the model (`config_options.ts`).
 *
 * @module
 */

import {
  agent,
  type AgentApp,
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  methods,
  type PermissionOption,
  PROTOCOL_VERSION,
  RequestError,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import type { ApprovalAnswer, ApprovalRequest, EndCause } from "@amber/core/kernel";
import type { EditorService, Message } from "@amber/core";
import {
  type AgentSession,
  describeEnd,
  SessionBusyError,
  type SessionEvent,
} from "../session/mod.ts";
import { promptText } from "./prompt_text.ts";
import { type AcpEditor, acpEditor } from "./editor.ts";
import { availableCommands } from "./slash_commands.ts";
import { approvalOfMode, modeState } from "./modes.ts";
import { configOptions, setConfigOption } from "./config_options.ts";
import { runSlashCommand } from "../slash_line.ts";
import {
  diff,
  toolCallEnded,
  toolCallOutput,
  toolCallStarted,
  toolKind,
  toolLocations,
} from "./tool_calls.ts";

/** What the ACP agent needs from its command. */
export interface AcpAgentOptions {
  /**
   * Opens a session whose host works in `cwd`, the workspace the editor gave; its file tools and
   * bash go through `editor` when the editor offers its files and terminals (see `editor.ts`).
   */
  readonly openSession: (cwd: string, editor?: EditorService) => Promise<AgentSession>;
  /** amber's version, told to the editor at `initialize`. */
  readonly version: string;
}

/** The ACP agent and what closes every session it opened. */
export interface AcpAgent {
  /** The handlers, to connect to a stream. */
  readonly app: AgentApp;
  /** Closes every open session and its host. */
  close(): Promise<void>;
}

/** A session/load of an id that is not one of amber's saved sessions. */
export class UnknownSessionError extends Error {
  /** Creates the error for `id`. */
  constructor(id: string, options?: ErrorOptions) {
    super(`no amber session '${id}' (\`amber sessions\` lists them)`, options);
    this.name = "UnknownSessionError";
  }
}

// One ACP session: amber's session, the workspace, the editor's service (and the terminals its
// commands ran in), the turn running and what the editor was last told about the commands.
interface Live {
  readonly session: AgentSession;
  readonly cwd: string;
  readonly editor: AcpEditor;
  turn?: AbortController;
  commands: string;
  // Stops watching the plugins for changes to the command tree.
  unwatch?: () => void;
}

// What changes the command tree between prompts: a plugin switched, failed or re-resolved (an
// MCP server that connected late).
const TREE_EVENTS = [
  "pluginEnabled",
  "pluginDisabled",
  "pluginFailed",
  "environmentChanged",
] as const;

const PERMISSIONS: readonly PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/**
 * Builds amber's ACP agent; connect its `app` to a stream (stdio) and `close` it when the
 * connection ends.
 */
export function createAcpAgent(options: AcpAgentOptions): AcpAgent {
  const sessions = new Map<string, Live>();
  const app = agent({ name: "amber" });

  // Notifications go out in the order they were made: a turn's events are synchronous, the
  // writes are not.
  let sent: Promise<void> = Promise.resolve();
  const send = (client: AgentContext, sessionId: string, update: SessionUpdate): void => {
    sent = sent.then(() => client.notify(methods.client.session.update, { sessionId, update }))
      .catch(() => {
        // The editor went away; the connection's end closes the sessions.
      });
  };
  const tellCommands = (client: AgentContext, sessionId: string, live: Live): void => {
    const commands = availableCommands(live.session.host.registries.command.tree());
    const key = JSON.stringify(commands);
    if (key === live.commands) return;
    live.commands = key;
    send(client, sessionId, {
      sessionUpdate: "available_commands_update",
      availableCommands: commands,
    });
  };
  // The session the editor names; one this connection does not have is the editor's error.
  const liveOf = (sessionId: string): Live => {
    const live = sessions.get(sessionId);
    if (live === undefined) throw RequestError.invalidParams({ sessionId }, "no such session");
    return live;
  };
  // What the editor said it offers, at initialize.
  let capabilities: ClientCapabilities | undefined;
  const open = async (cwd: string, client: AgentContext, sessionId: string): Promise<Live> => {
    // A command in the editor's terminal shows in the row of the call that runs it, after the
    // call's tool_call: the editor's updates join the queue.
    const editor = acpEditor({
      client,
      sessionId,
      capabilities,
      send: (update) => send(client, sessionId, update),
    });
    const session = await options.openSession(cwd, editor.service);
    return { session, cwd, editor, commands: "" };
  };
  // The editor hears of the commands now and whenever the tree may have changed; the check
  // waits a tick, since a plugin's event comes before its contributions are in place.
  const watch = (client: AgentContext, sessionId: string, live: Live): void => {
    const check = () => setTimeout(() => tellCommands(client, sessionId, live), 0);
    const events = live.session.host.runtime.events;
    const subscriptions = TREE_EVENTS.map((type) => events.subscribe(type, check));
    live.unwatch = () => subscriptions.forEach((subscription) => subscription.unsubscribe());
    check();
  };

  app.onRequest(methods.agent.initialize, ({ params }) => {
    capabilities = params.clientCapabilities;
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true, image: false, audio: false },
      },
      agentInfo: { name: "amber", title: "amber", version: options.version },
      authMethods: [],
    };
  });

  app.onRequest(methods.agent.session.new, async ({ params, client }) => {
    const sessionId = crypto.randomUUID();
    const live = await open(params.cwd, client, sessionId);
    sessions.set(sessionId, live);
    const options = await configOptions(live.session);
    // The first list goes after the response, so the editor knows the session it belongs to.
    watch(client, sessionId, live);
    return { sessionId, modes: modeState(live.session.approval), configOptions: options };
  });

  app.onRequest(methods.agent.session.load, async ({ params, client }) => {
    const known = sessions.get(params.sessionId);
    const amberId = known?.session.id ?? params.sessionId;
    // A session this connection has open is closed first: its file lock is this process's own,
    // and the reload keeps the mode and model the editor chose.
    const kept = known === undefined ? undefined : {
      approval: known.session.approval,
      provider: known.session.provider,
      model: known.session.model,
    };
    if (known !== undefined) {
      sessions.delete(params.sessionId);
      known.turn?.abort();
      await closeLive(known);
    }
    const live = await open(params.cwd, client, params.sessionId);
    let messages: readonly Message[];
    try {
      ({ messages } = await live.session.resume(amberId));
    } catch (error) {
      await closeLive(live);
      // A session another amber has open says so; any other failure is an unknown id.
      const reason = error instanceof SessionBusyError
        ? error
        : new UnknownSessionError(amberId, { cause: error });
      throw RequestError.invalidParams({ sessionId: params.sessionId }, reason.message);
    }
    if (kept !== undefined) {
      live.session.setApproval(kept.approval);
      if (kept.provider !== live.session.provider) live.session.setProvider(kept.provider);
      if (kept.model !== live.session.model) live.session.setModel(kept.model);
    }
    sessions.set(params.sessionId, live);
    for (const update of replay(messages, params.cwd)) send(client, params.sessionId, update);
    tellCommands(client, params.sessionId, live);
    watch(client, params.sessionId, live);
    await sent;
    return {
      modes: modeState(live.session.approval),
      configOptions: await configOptions(live.session),
    };
  });

  app.onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const live = liveOf(params.sessionId);
    if (live.turn !== undefined) {
      throw RequestError.invalidRequest({ sessionId: params.sessionId }, "a turn is running");
    }
    const controller = new AbortController();
    live.turn = controller;
    const sessionId = params.sessionId;
    const unsubscribe = live.session.subscribe((event) => {
      for (const update of eventUpdates(event, live)) {
        send(client, sessionId, update);
      }
    });
    try {
      const stopReason = await prompt(live, params.prompt, controller.signal, {
        say: (text) =>
          send(client, sessionId, {
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text },
          }),
        ask: (request, signal) => askEditor(client, sessionId, live, request, signal),
      });
      return {
        stopReason,
        ...(live.session.id === undefined ? {} : { _meta: { amberSession: live.session.id } }),
      };
    } finally {
      unsubscribe();
      live.turn = undefined;
      tellCommands(client, sessionId, live);
      await sent;
    }
  });

  app.onNotification(methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.turn?.abort();
  });

  // A mode or an option switched while a turn runs: see modes.ts and config_options.ts for
  // when it takes effect. Each switch shows in the other's shape too.
  app.onRequest(methods.agent.session.setMode, async ({ params, client }) => {
    const live = liveOf(params.sessionId);
    live.session.setApproval(approvalOfMode(params.modeId));
    send(client, params.sessionId, {
      sessionUpdate: "config_option_update",
      configOptions: await configOptions(live.session),
    });
    await sent;
    return {};
  });

  app.onRequest(methods.agent.session.setConfigOption, async ({ params, client }) => {
    const live = liveOf(params.sessionId);
    const change = await setConfigOption(live.session, params);
    if (change.mode !== undefined) {
      send(client, params.sessionId, {
        sessionUpdate: "current_mode_update",
        currentModeId: change.mode,
      });
      await sent;
    }
    return { configOptions: change.configOptions };
  });

  return {
    app,
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      for (const live of all) live.turn?.abort();
      await Promise.all(all.map(closeLive));
    },
  };
}

interface PromptIo {
  say(text: string): void;
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

// A prompt naming a command runs it (its text is the answer; a prompt it answers with goes to
// the model); any other goes to the model.
async function prompt(
  live: Live,
  blocks: readonly ContentBlock[],
  signal: AbortSignal,
  io: PromptIo,
): Promise<StopReason> {
  const text = promptText(blocks);
  const { session } = live;
  const outcome = await runSlashCommand(session.host, text.trim());
  if (outcome !== undefined && !(outcome.ok && outcome.prompt !== undefined)) {
    io.say(session.redact(outcome.ok ? outcome.text : `error: ${outcome.error}`));
    return "end_turn";
  }
  session.ready();
  const result = await session.turn(outcome?.ok ? outcome.prompt! : text, {
    ...(outcome?.ok === true && outcome.turn !== undefined ? { command: outcome.turn } : {}),
    signal,
    ask: io.ask,
  });
  return stopReason(result.cause, session);
}

function stopReason(cause: EndCause, session: AgentSession): StopReason {
  switch (cause.kind) {
    case "completed":
      return "end_turn";
    case "cancelled":
      return "cancelled";
    case "maxSteps":
      return "max_turn_requests";
    case "error":
      throw RequestError.internalError(undefined, session.redact(describeEnd(cause)));
  }
}

async function askEditor(
  client: AgentContext,
  sessionId: string,
  live: Live,
  request: ApprovalRequest,
  signal: AbortSignal,
): Promise<ApprovalAnswer> {
  const { call } = request;
  const summary = live.session.redact(request.summary);
  // A gate's or a rule's question is asked every time: "always" is not offered.
  const options = request.correlationId === undefined && request.rule === undefined
    ? PERMISSIONS
    : PERMISSIONS.filter((option) => option.kind !== "allow_always");
  const response = await client.request(methods.client.session.requestPermission, {
    sessionId,
    toolCall: {
      toolCallId: call.id,
      title: request.reason === undefined ? summary : `${summary} (${request.reason})`,
      kind: toolKind(call.name),
      status: "pending",
      locations: toolLocations(call.arguments, live.cwd),
      ...(request.change === undefined ? {} : { content: [diff(request.change, live.cwd)] }),
    },
    options: [...options],
  }, { cancellationSignal: signal }).catch(() => undefined);
  if (response?.outcome.outcome !== "selected") return "deny";
  switch (response.outcome.optionId) {
    case "allow_once":
      return "once";
    case "allow_always":
      return "always";
    default:
      return "deny";
  }
}

// A session event as the editor sees it; the events it has no use for are none.
function eventUpdates(event: SessionEvent, live: Live): SessionUpdate[] {
  const { cwd, session } = live;
  switch (event.type) {
    case "text":
      return [{
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: event.delta },
      }];
    case "reasoning":
      return [{
        sessionUpdate: "agent_thought_chunk",
        content: { type: "text", text: event.delta },
      }];
    case "toolStart":
      live.editor.startCall(event.call.id);
      return [toolCallStarted(event.call, event.summary, cwd)];
    case "toolOutput":
      return [toolCallOutput(event.call, event.chunk)];
    case "toolEnd": {
      // A call that ran in the editor's terminals keeps them in its row.
      const terminals = live.editor.endCall(event.call.id);
      const ended = toolCallEnded(event.call, event.result, cwd, terminals);
      if (event.call.name !== "todowrite" || !event.result.ok) return [ended];
      // The todo list the call wrote, as the plan.
      const entries = session.host.services.todos?.list() ?? [];
      return [ended, {
        sessionUpdate: "plan",
        entries: entries.map((item) => ({
          content: item.content,
          status: item.status,
          priority: "medium",
        })),
      }];
    }
    default:
      return [];
  }
}

// A saved conversation as the updates that would have shown it: the user's messages, the
// agent's reasoning and text, each tool call with its result.
function replay(messages: readonly Message[], cwd: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        updates.push({
          sessionUpdate: "user_message_chunk",
          content: { type: "text", text: message.content },
        });
        break;
      case "assistant":
        if (message.reasoning) {
          updates.push({
            sessionUpdate: "agent_thought_chunk",
            content: { type: "text", text: message.reasoning },
          });
        }
        if (message.content !== "") {
          updates.push({
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: message.content },
          });
        }
        for (const call of message.toolCalls ?? []) {
          updates.push(toolCallStarted(call, call.name, cwd));
        }
        break;
      case "tool":
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: message.toolCallId,
          status: message.isError ? "failed" : "completed",
          content: [{ type: "content", content: { type: "text", text: message.content } }],
        });
        break;
    }
  }
  return updates;
}

async function closeLive(live: Live): Promise<void> {
  live.unwatch?.();
  live.session.close();
  await live.session.host.close();
}
