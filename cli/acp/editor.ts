/**
 * The editor's file system and terminals as amber's {@linkcode EditorService}, for one ACP
 * session: what the editor declared at `initialize` (`clientCapabilities.fs.readTextFile`,
 * `fs.writeTextFile`, `terminal`) becomes the service's members, and nothing else does, so a
 * tool whose member is absent runs on amber's own I/O.
 *
 * The editor is another program, so every answer is checked and every wait is bounded: a
 * request that gets no answer fails after {@linkcode EDITOR_REQUEST_MS}; a command is waited
 * for until it ends or its signal aborts, then `terminal/kill` and at most
 * {@linkcode KILL_GRACE_MS} more; its terminal is always released. A terminal is shown in the
 * row of the tool call that runs it (`EditorCommand.toolCallId`): a `tool_call_update` with
 * `{type: "terminal"}` content, sent through the agent's queue of updates so that it follows the
 * call's `tool_call`. Only a call the editor was told of has a row: a sub-agent's calls, which it
 * never sees, show their terminals nowhere. The service remembers a call's terminals until the
 * call ends, for its last update, which shows them still (the editor keeps a released
 * terminal's output on screen).
 *
 * @module
 */

import {
  type AgentContext,
  type ClientCapabilities,
  type ClientRequestMethod,
  type ClientRequestParamsByMethod,
  methods,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type {
  EditorCallOptions,
  EditorCommand,
  EditorCommandResult,
  EditorService,
} from "@amber/core";

/** How long a request to the editor may go unanswered before it fails (ms). */
export const EDITOR_REQUEST_MS = 30_000;
/**
 * How long after `terminal/kill` amber waits for the command to end (ms): short enough that a
 * cancelled call still ends within the kernel's grace for a cancelled tool.
 */
export const KILL_GRACE_MS = 1_000;

/** The part of the ACP connection the editor service uses: its requests. */
export type EditorClient = Pick<AgentContext, "request">;

/** A request to the editor failed, or it answered something of the wrong shape. */
export class EditorRequestError extends Error {
  /** The ACP method asked. */
  readonly method: string;
  /** Says which `method` failed and why. */
  constructor(method: string, reason: string, options?: ErrorOptions) {
    super(`the editor's ${method} failed: ${reason}`, options);
    this.name = "EditorRequestError";
    this.method = method;
  }
}

/** Options of {@linkcode acpEditor}. */
export interface AcpEditorOptions {
  /** The connection to the editor. */
  readonly client: EditorClient;
  /** The ACP session the service works for. */
  readonly sessionId: string;
  /**
   * Sends an update of the session to the editor, after every update sent before it: a
   * terminal's `tool_call_update` must not overtake the `tool_call` it refers to.
   */
  readonly send: (update: SessionUpdate) => void;
  /** What the editor declared at `initialize`; undefined when it has not. */
  readonly capabilities: ClientCapabilities | undefined;
  /** Overrides {@linkcode EDITOR_REQUEST_MS}. */
  readonly requestMs?: number;
  /** Overrides {@linkcode KILL_GRACE_MS}. */
  readonly killGraceMs?: number;
}

/** The editor service of one ACP session, and the rows its terminals show in. */
export interface AcpEditor {
  /** The service, with only what the editor offers; undefined when it offers none of it. */
  readonly service: EditorService | undefined;
  /** The editor was told of the tool call `toolCallId`: its commands' terminals show in its row. */
  startCall(toolCallId: string): void;
  /**
   * The call `toolCallId` ended: the ids of the terminals its commands ran in, oldest first, for
   * its last update. A terminal it starts from now on (a call left running past its deadline)
   * shows nowhere.
   */
  endCall(toolCallId: string): readonly string[];
}

/**
 * The editor service for `sessionId` over `client`, with the members the capabilities offer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agent, client, methods } from "@agentclientprotocol/sdk";
 * import { acpEditor } from "./editor.ts";
 * const buffers = new Map([["/w/a.txt", "unsaved\n"]]);
 * const editorApp = client({ name: "editor" })
 *   .onRequest(methods.client.fs.readTextFile, ({ params }) => ({
 *     content: buffers.get(params.path) ?? "",
 *   }));
 * const connection = agent({ name: "amber" }).connect(editorApp);
 * const send = () => {};
 * const editor = acpEditor({
 *   client: connection.client,
 *   sessionId: "s1",
 *   send,
 *   capabilities: { fs: { readTextFile: true } },
 * });
 * assert.equal(await editor.service?.readTextFile?.("/w/a.txt"), "unsaved\n");
 * assert.equal(editor.service?.writeTextFile, undefined);
 * const none = acpEditor({ client: connection.client, sessionId: "s1", send, capabilities: {} });
 * assert.equal(none.service, undefined);
 * connection.close();
 * ```
 */
export function acpEditor(options: AcpEditorOptions): AcpEditor {
  const { client, sessionId } = options;
  const requestMs = options.requestMs ?? EDITOR_REQUEST_MS;
  const killGraceMs = options.killGraceMs ?? KILL_GRACE_MS;
  // The calls the editor has a row for, with the terminals shown in it.
  const rows = new Map<string, string[]>();
  const service: EditorService = {};
  const fs = options.capabilities?.fs;
  if (fs?.readTextFile === true) {
    service.readTextFile = async (path: string, call?: EditorCallOptions) => {
      const method = methods.client.fs.readTextFile;
      const answer = await ask(client, method, { sessionId, path }, requestMs, call?.signal);
      const content = field(answer, "content");
      if (typeof content !== "string") {
        throw new EditorRequestError(method, `it answered without text (${shape(content)})`);
      }
      return content;
    };
  }
  if (fs?.writeTextFile === true) {
    service.writeTextFile = async (path: string, text: string, call?: EditorCallOptions) => {
      const params = { sessionId, path, content: text };
      await ask(client, methods.client.fs.writeTextFile, params, requestMs, call?.signal);
    };
  }
  if (options.capabilities?.terminal === true) {
    const show = (toolCallId: string, terminalId: string): void => {
      const shown = rows.get(toolCallId);
      if (shown === undefined) return;
      shown.push(terminalId);
      options.send({
        sessionUpdate: "tool_call_update",
        toolCallId,
        content: shown.map((id) => ({ type: "terminal", terminalId: id })),
      });
    };
    service.runCommand = (command: EditorCommand) =>
      runCommand({ client, sessionId, requestMs, killGraceMs, show }, command);
  }
  return {
    service: Object.keys(service).length === 0 ? undefined : Object.freeze(service),
    startCall(toolCallId) {
      if (!rows.has(toolCallId)) rows.set(toolCallId, []);
    },
    endCall(toolCallId) {
      const shown = rows.get(toolCallId) ?? [];
      rows.delete(toolCallId);
      return shown;
    },
  };
}

interface Terminals {
  readonly client: EditorClient;
  readonly sessionId: string;
  readonly requestMs: number;
  readonly killGraceMs: number;
  // Shows a terminal in the row of the call, beside the call's earlier ones; nowhere when the
  // editor has no row for it.
  readonly show: (toolCallId: string, terminalId: string) => void;
}

async function runCommand(at: Terminals, command: EditorCommand): Promise<EditorCommandResult> {
  const { client, sessionId, requestMs } = at;
  const create = methods.client.terminal.create;
  // Not cancelled by the command's signal: a terminal the editor made anyway would be lost.
  const created = await ask(client, create, {
    sessionId,
    command: command.command,
    args: [...command.args],
    env: Object.entries(command.env ?? {}).map(([name, value]) => ({ name, value })),
    cwd: command.cwd,
    ...(command.outputByteLimit === undefined ? {} : { outputByteLimit: command.outputByteLimit }),
  }, requestMs);
  const terminalId = field(created, "terminalId");
  if (typeof terminalId !== "string" || terminalId === "") {
    throw new EditorRequestError(
      create,
      `it answered without a terminal id (${shape(terminalId)})`,
    );
  }
  const ids = { sessionId, terminalId };
  try {
    if (command.toolCallId !== undefined) at.show(command.toolCallId, terminalId);
    const waitForExit = (ms: number | undefined, signal?: AbortSignal) =>
      ask(client, methods.client.terminal.waitForExit, ids, ms, signal);
    let exit: unknown;
    let killed = false;
    try {
      exit = await waitForExit(undefined, command.signal);
    } catch (error) {
      if (!command.signal.aborted) throw error;
      killed = true;
    }
    if (killed) {
      await ask(client, methods.client.terminal.kill, ids, requestMs).catch(() => {
        // The output is still worth asking for; the terminal is released below.
      });
      exit = await waitForExit(at.killGraceMs).catch(() => undefined);
    }
    const outputMethod = methods.client.terminal.output;
    const answer = await ask(client, outputMethod, ids, requestMs);
    const output = field(answer, "output");
    if (typeof output !== "string") {
      throw new EditorRequestError(outputMethod, `it answered without text (${shape(output)})`);
    }
    const status = exitStatus(exit) ?? exitStatus(field(answer, "exitStatus")) ?? {};
    return { output, truncated: field(answer, "truncated") === true, ...status, killed };
  } finally {
    await ask(client, methods.client.terminal.release, ids, requestMs).catch(() => {
      // A terminal the editor will not release is the editor's to clean up.
    });
  }
}

// An exit status as the editor gave it, with only the fields that have the right type; none
// when it gave neither.
function exitStatus(value: unknown): { exitCode?: number; signal?: string } | undefined {
  const code = field(value, "exitCode");
  const signal = field(value, "signal");
  const status = {
    ...(typeof code === "number" && Number.isInteger(code) ? { exitCode: code } : {}),
    ...(typeof signal === "string" && signal !== "" ? { signal } : {}),
  };
  return Object.keys(status).length === 0 ? undefined : status;
}

// A request to the editor, given up (and withdrawn) when `signal` aborts or, with `ms`, when no
// answer came in time; its failure an EditorRequestError naming the method. The answer is the
// caller's to check: the editor is another program.
async function ask<M extends ClientRequestMethod>(
  client: EditorClient,
  method: M,
  params: ClientRequestParamsByMethod[M],
  ms: number | undefined,
  signal?: AbortSignal,
): Promise<unknown> {
  const controller = new AbortController();
  let late = false;
  const timer = ms === undefined ? undefined : setTimeout(() => {
    late = true;
    controller.abort();
  }, ms);
  const onAbort = (): void => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) controller.abort();
  try {
    return await client.request(method, params, {
      cancellationSignal: controller.signal,
      stopWaitingOnCancel: true,
    });
  } catch (error) {
    const reason = late
      ? `no answer within ${ms} ms`
      : signal?.aborted
      ? "cancelled"
      : error instanceof Error
      ? error.message
      : String(error);
    throw new EditorRequestError(method, reason, { cause: error });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function shape(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  return Array.isArray(value) ? "a list" : `a ${typeof value}`;
}
