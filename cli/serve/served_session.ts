/**
 * One session of `amber serve`: its own host on its own workspace, an {@linkcode AgentSession}
 * over it, and the log of its events. A turn runs in the background: a client that goes away
 * does not stop it, and reads its events again from an offset. An approval the kernel asks for
 * becomes an `approval` event and waits for the answer posted to the API (or for a cancel).
 * The session's plugin selection is its own: switches are never written to the config directory.
 *
 * @module
 */

import type { ApprovalPolicy, Diagnostic, Plugin } from "@amber/core";
import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import { type Host, openHost } from "../host.ts";
import type { EnvReader, ProviderOverrides } from "../provider_settings.ts";
import { AgentSession, describeEnd, type SessionEvent } from "../session/mod.ts";
import { runSlashCommand } from "../slash_line.ts";
import { EventLog, type ServedEvent } from "./event_log.ts";
import { ProblemError } from "./problem.ts";

/** What {@linkcode ServedSession.open} takes. */
export interface ServedSessionOptions {
  /** The session's workspace. */
  readonly workspace: string;
  /** The config directory; amber's default when absent. */
  readonly configDir?: string;
  /** The plugins each host starts with. */
  readonly plugins: () => readonly Plugin[];
  /** Whether the third-party plugins of `plugins.lock.json` load too; true by default. */
  readonly thirdParty?: boolean;
  /** The provider, model, base URL and effort; config.yaml's by default. */
  readonly overrides?: ProviderOverrides;
  /** The approval policy; `ask` (over the API) by default. */
  readonly approve?: ApprovalPolicy;
  /**
   * Plugins to switch on and off before the first turn, in this session's host only: nothing is
   * written to the config directory, so other sessions and the user's `amber` keep their own.
   */
  readonly pluginSwitches?: {
    readonly enable?: readonly string[];
    readonly disable?: readonly string[];
  };
  /** Reads an environment variable (the provider's key); `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /** How many events the session keeps for replay. */
  readonly eventCapacity?: number;
  /** Receives the host's diagnostics (a plugin's fault, a corrupt file); dropped otherwise. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A session as `GET /sessions` lists it. */
export interface SessionSummary {
  /** The server's id of the session. */
  readonly id: string;
  /** Its workspace. */
  readonly workspace: string;
  /** The provider in use. */
  readonly provider: string;
  /** The model in use. */
  readonly model: string;
  /** Whether a turn is running. */
  readonly busy: boolean;
}

/** A plugin as `GET /sessions/{id}/plugins` lists it. */
export interface ServedPlugin {
  /** The plugin's id. */
  readonly id: string;
  /** Its name. */
  readonly name: string;
  /** Its version. */
  readonly version: string;
  /** Its state: `active`, `disabled`, `blocked`, `failed` or `registered`. */
  readonly state: string;
}

/** A session served over HTTP. */
export class ServedSession {
  /** The server's id of the session (not its session file's). */
  readonly id: string = crypto.randomUUID();
  /** Its events, for replay. */
  readonly log: EventLog;
  readonly #session: AgentSession;
  readonly #workspace: string;
  #turns = 0;
  #controller: AbortController | undefined;
  #running: Promise<void> | undefined;
  readonly #pending = new Map<string, (answer: ApprovalAnswer) => void>();
  #closed = false;

  private constructor(session: AgentSession, workspace: string, log: EventLog) {
    this.#session = session;
    this.#workspace = workspace;
    this.log = log;
    session.subscribe((event) => log.append(neutralEvent(event)));
  }

  /**
   * Opens the session's host on its workspace and the session over it. Rejects with a
   * {@linkcode ProblemError} when the provider cannot be used or a plugin switch fails.
   */
  static async open(options: ServedSessionOptions): Promise<ServedSession> {
    const session = await AgentSession.open({
      openHost: (services) =>
        openHost({
          ...services,
          plugins: options.plugins(),
          workspace: options.workspace,
          ...(options.configDir === undefined ? {} : { configDir: options.configDir }),
          ...(options.thirdParty === undefined ? {} : { thirdParty: options.thirdParty }),
          // A served session has no terminal: its MCP servers connect, a workspace's unapproved
          // one stays out (nobody to ask).
          mcp: { connect: true },
          ...(options.onDiagnostic === undefined ? {} : { onDiagnostic: options.onDiagnostic }),
        }),
      overrides: options.overrides ?? {},
      approval: options.approve ?? "ask",
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    try {
      const problem = session.problem;
      if (problem !== undefined) throw new ProblemError(400, session.redact(problem), "provider");
      await switchPlugins(session.host, options.pluginSwitches);
    } catch (error) {
      session.close();
      await session.host.close();
      throw error;
    }
    return new ServedSession(session, options.workspace, new EventLog(options.eventCapacity));
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** The session as the list shows it. */
  summary(): SessionSummary {
    return {
      id: this.id,
      workspace: this.#workspace,
      provider: this.#session.provider,
      model: this.#session.model,
      busy: this.busy,
    };
  }

  /** The conversation so far. */
  get messages(): AgentSession["messages"] {
    return this.#session.messages;
  }

  /**
   * Starts a turn in the background: its number (from 1) and the offset its events start at.
   * A running turn refuses another (409).
   */
  prompt(text: string): { readonly turn: number; readonly from: number } {
    if (this.#closed) throw new ProblemError(404, `session '${this.id}' is closed`, "id");
    if (this.busy) throw new ProblemError(409, "a turn is running; cancel it or wait for its end");
    const controller = new AbortController();
    this.#controller = controller;
    const turn = ++this.#turns;
    const from = this.log.next;
    this.#running = this.#run(text, controller.signal).then(
      () => {},
      (error: unknown) => {
        // The turn broke off without its `end`: the stream gets one that says why.
        const message = error instanceof Error ? error.message : String(error);
        this.log.append({ type: "end", cause: { kind: "error", message } });
      },
    ).finally(() => {
      this.#running = undefined;
      this.#controller = undefined;
    });
    return { turn, from };
  }

  // A prompt naming a command runs it, as `amber run` and `amber acp` do: its answer is the
  // turn's text, or the prompt it answers with goes to the model.
  async #run(text: string, signal: AbortSignal): Promise<void> {
    const outcome = await runSlashCommand(this.#session.host, text.trim());
    if (outcome !== undefined && !(outcome.ok && outcome.prompt !== undefined)) {
      const said = this.#session.redact(outcome.ok ? outcome.text : `error: ${outcome.error}`);
      if (said !== "") this.log.append({ type: "text", delta: said });
      this.log.append({
        type: "end",
        cause: outcome.ok ? { kind: "completed" } : { kind: "error", message: said },
      });
      return;
    }
    await this.#session.turn(outcome?.ok ? outcome.prompt! : text, {
      ...(outcome?.ok === true && outcome.turn !== undefined ? { command: outcome.turn } : {}),
      signal,
      ask: (request, signal) => this.#ask(request, signal),
    });
  }

  /** Answers the approval `requestId`; an unknown (or already answered) one is a 404. */
  answer(requestId: string, answer: ApprovalAnswer): void {
    const resolve = this.#pending.get(requestId);
    if (resolve === undefined) {
      throw new ProblemError(404, `no approval '${requestId}' is waiting`, "requestId");
    }
    resolve(answer);
  }

  /** Cancels the running turn, if any; its waiting approvals are denied. */
  cancel(): void {
    this.#controller?.abort();
  }

  /** The host's plugins and their states. */
  plugins(): ServedPlugin[] {
    return this.#session.host.runtime.list().map(({ plugin, state }) => ({
      id: plugin.id,
      name: plugin.name,
      version: plugin.version,
      state: state.status,
    }));
  }

  /** The host's runtime, for switching plugins. */
  get host(): Host {
    return this.#session.host;
  }

  /** Cancels a running turn, waits for it to commit, and closes the session and its host. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.cancel();
    await this.#running;
    this.#session.close();
    await this.#session.host.close();
    this.log.close();
  }

  #ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.resolve("deny");
    const { promise, resolve } = Promise.withResolvers<ApprovalAnswer>();
    const requestId = crypto.randomUUID();
    const settle = (answer: ApprovalAnswer) => {
      this.#pending.delete(requestId);
      signal.removeEventListener("abort", onAbort);
      resolve(answer);
    };
    const onAbort = () => settle("deny");
    signal.addEventListener("abort", onAbort, { once: true });
    this.#pending.set(requestId, settle);
    const redact = (text: string) => this.#session.redact(text);
    this.log.append({
      type: "approval",
      requestId,
      call: {
        id: request.call.id,
        name: request.call.name,
        arguments: redact(request.call.arguments),
      },
      summary: redact(request.summary),
      ...(request.change === undefined ? {} : { change: request.change }),
    });
    return promise;
  }
}

// The session's events as `amber run --json` writes them.
function neutralEvent(event: SessionEvent): ServedEvent {
  if (event.type === "session") return { type: "session", id: event.id };
  if (event.type === "end" && event.cause.kind === "error") {
    // A CapabilityBoundError does not serialise on its own; its message says it all.
    return { type: "end", cause: { kind: "error", message: describeEnd(event.cause) } };
  }
  return event;
}

async function switchPlugins(
  host: Host,
  switches: ServedSessionOptions["pluginSwitches"],
): Promise<void> {
  for (
    const [on, ids, key] of [[true, switches?.enable, "enable"], [
      false,
      switches?.disable,
      "disable",
    ]] as const
  ) {
    for (const [index, id] of (ids ?? []).entries()) {
      try {
        await host.runtime.setState(id, on, { persist: false });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new ProblemError(400, message, `plugins.${key}[${index}]`, { cause: error });
      }
    }
  }
}
