/**
 * The agent session behind the TUI: the provider (resolved as `amber run` resolves it, and
 * switchable with /model and /provider), the conversation carried from turn to turn, and the
 * session file every step is committed to (`sessions/<id>.jsonl`, created with the first prompt,
 * or the one given to --resume or /resume). Each turn is one `runAgent` call with the TUI's
 * event sink, approval callback and a cancel signal; sub-agents started by the `task` tool get
 * their own session file, as in `amber run`.
 *
 * @module
 */

import {
  type ApprovalAnswer,
  type ApprovalPolicy,
  type ApprovalRequest,
  type Dialect,
  type Message,
  newSessionId,
  runAgent,
  type RunEvent,
  type RunResult,
  SessionFile,
  type StateCommand,
  type SubagentService,
} from "@amber/core";
import { ProviderClient } from "@amber/providers/client";
import { runSubagent } from "../agent.ts";
import type { Host } from "../host.ts";
import {
  accountSettings,
  type ProviderOverrides,
  requireKey,
  type ResolvedProvider,
  resolveProvider,
} from "../provider_settings.ts";

/** What a session is opened with. */
export interface AgentSessionOptions {
  /** The started host. */
  readonly host: Host;
  /** `--provider`, `--model`, `--base-url`. */
  readonly overrides: ProviderOverrides;
  /** The approval policy (config.yaml's `approval`, `ask` by default). */
  readonly approval: ApprovalPolicy;
  /** The most model calls per turn. */
  readonly maxSteps: number;
  /** Asks the user about a tool call that needs approval. */
  readonly ask: (request: ApprovalRequest, signal?: AbortSignal) => Promise<ApprovalAnswer>;
  /** Told when the provider client retries. */
  readonly onRetry?: (message: string) => void;
  /** Binds the sub-agent service the host was opened with. */
  readonly bindSubagents?: (run: SubagentService["run"]) => void;
  /** Reads an environment variable (the key); `Deno.env.get` by default. */
  readonly env?: (name: string) => string | undefined;
}

/**
 * One interactive session.
 *
 * @example
 * ```ts ignore
 * const session = new AgentSession({ host, overrides: {}, approval: "ask", maxSteps: 50, ask });
 * const result = await session.turn("hi", new AbortController().signal, (event) => {});
 * console.log(session.id, result.cause.kind);
 * ```
 */
export class AgentSession {
  readonly #o: AgentSessionOptions;
  #overrides: ProviderOverrides;
  #resolved: ResolvedProvider | undefined;
  #dialect: Dialect | undefined;
  #client: ProviderClient | undefined;
  #key: string | undefined;
  #problem: string | undefined;
  #file: SessionFile | undefined;
  #history: Message[] = [];
  #state: StateCommand[] = [];
  #step = 0;
  #tasks = 0;

  /** Opens a session; the provider is resolved now (a problem is kept, not thrown). */
  constructor(options: AgentSessionOptions) {
    this.#o = options;
    this.#overrides = { ...options.overrides };
    this.#resolve();
    options.bindSubagents?.((prompt, { signal }) => this.#subagent(prompt, signal));
  }

  /** The session id, once the first prompt created the file (or one was resumed). */
  get id(): string | undefined {
    return this.#file?.id;
  }

  /** The model in use (what was asked for, when the provider could not be resolved). */
  get model(): string {
    return this.#resolved?.model ?? this.#overrides.model ?? this.#o.host.config.model ?? "";
  }

  /** The provider preset in use. */
  get provider(): string {
    return this.#resolved?.preset.name ?? this.#overrides.provider ?? "";
  }

  /** The command-line settings as they stand after /model and /provider. */
  get overrides(): ProviderOverrides {
    return this.#overrides;
  }

  /** Why no turn can run (no key, unknown provider), if that is so. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** The conversation so far. */
  get messages(): readonly Message[] {
    return this.#history;
  }

  /** The account request for wallet and allowance readouts, when the provider resolved. */
  account(): { provider: string; baseUrl: string; apiKey?: string } | undefined {
    return this.#resolved === undefined ? undefined : accountSettings(this.#resolved);
  }

  /** Switches the model; returns what the session uses now. */
  setModel(model: string): string {
    this.#overrides = { ...this.#overrides, model };
    this.#resolve();
    return this.#describe();
  }

  /** Switches the provider preset (its default model, unless one was set with /model). */
  setProvider(provider: string): string {
    const { model: _model, baseUrl: _baseUrl, ...rest } = this.#overrides;
    this.#overrides = { ...rest, provider };
    this.#resolve();
    return this.#describe();
  }

  /** Runs one turn of the conversation; every step is committed before the next starts. */
  async turn(
    prompt: string,
    signal: AbortSignal,
    onEvent: (event: RunEvent) => void,
  ): Promise<RunResult> {
    if (this.#problem !== undefined) throw new Error(this.#problem);
    const resolved = this.#resolved!;
    const host = this.#o.host;
    this.#file ??= await SessionFile.create(host.configDir, {
      id: newSessionId(new Date()),
      workspace: host.workspace,
      provider: resolved.preset.name,
      model: resolved.model,
      title: prompt.replace(/\s+/g, " ").slice(0, 80),
    }, this.#secrets());
    const firstStep = this.#step;
    let next = firstStep;
    const result = await runAgent({
      runtime: host.runtime,
      model: this.#client!,
      modelName: resolved.model,
      reasoningEffort: resolved.reasoningEffort,
      prompt,
      history: this.#history,
      historyState: this.#state,
      firstStep,
      session: this.#file,
      approval: this.#o.approval,
      ask: (request) => this.#o.ask(request, signal),
      maxSteps: this.#o.maxSteps,
      signal,
      onEvent: (event) => {
        if (event.type === "stepEnd") next = event.step + 1;
        onEvent(event);
      },
      onResponse: (_status, headers) => {
        const snapshot = this.#dialect?.allowanceFromHeaders?.(headers);
        if (snapshot !== undefined) {
          host.registries.allowance.record(accountSettings(resolved), snapshot);
        }
      },
    });
    this.#history = [...result.messages];
    this.#state = [...result.state].map(([key, value]) => ({ op: "set", key, value }));
    this.#step = next;
    return result;
  }

  /** Continues session `id`: its conversation becomes this one's. */
  async resume(id: string): Promise<{ readonly messages: readonly Message[]; tornTo?: string }> {
    const resumed = await SessionFile.resume(this.#o.host.configDir, id, this.#secrets());
    this.#file?.close();
    this.#file = resumed.file;
    this.#history = [...resumed.session.messages];
    this.#state = resumed.session.steps.flatMap((step) => [...(step.state ?? [])]);
    this.#step = resumed.session.steps.length;
    return resumed.tornTo === undefined
      ? { messages: this.#history }
      : { messages: this.#history, tornTo: resumed.tornTo };
  }

  /** Starts over: the next prompt opens a new session file. */
  reset(): void {
    this.#file?.close();
    this.#file = undefined;
    this.#history = [];
    this.#state = [];
    this.#step = 0;
  }

  /** Closes the session file. */
  close(): void {
    this.#file?.close();
  }

  #secrets(): string[] {
    return this.#key === undefined ? [] : [this.#key];
  }

  #describe(): string {
    if (this.#problem !== undefined) return `cannot use it: ${this.#problem}`;
    return `provider ${this.provider}, model ${this.model}`;
  }

  #resolve(): void {
    try {
      const resolved = resolveProvider(this.#o.host, this.#overrides, this.#o.env);
      this.#key = requireKey(resolved);
      const dialect = resolved.flavor.dialect();
      this.#resolved = resolved;
      this.#dialect = dialect;
      this.#client = new ProviderClient(dialect, resolved.settings, {
        onRetry: (info) =>
          this.#o.onRetry?.(
            `${info.message}; retrying in ${(info.delayMs / 1000).toFixed(1)} s ` +
              `(attempt ${info.attempt + 1})`,
          ),
      });
      this.#problem = undefined;
    } catch (error) {
      this.#problem = error instanceof Error ? error.message : String(error);
    }
  }

  // A sub-agent runs on the same provider with its own session file, and cannot start another.
  #subagent(prompt: string, signal: AbortSignal): Promise<string> {
    if (this.#problem !== undefined) return Promise.reject(new Error(this.#problem));
    const resolved = this.#resolved!;
    const parent = this.#file?.id ?? newSessionId(new Date());
    return runSubagent({
      host: this.#o.host,
      model: this.#client!,
      modelName: resolved.model,
      reasoningEffort: resolved.reasoningEffort,
      provider: resolved.preset.name,
      prompt,
      sessionId: `${parent}-task${++this.#tasks}`,
      secrets: this.#secrets(),
      approval: this.#o.approval,
      ask: (request) => this.#o.ask(request, signal),
      maxSteps: this.#o.maxSteps,
      signal,
    });
  }
}
