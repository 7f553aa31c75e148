/**
 * The agent session: everything that lives longer than one step of a run. It holds the provider
 * (resolved once, switched only through it), the session file (created by the first turn, or
 * resumed, a torn last line moved aside), the approvals answered "always", the sub-agents the
 * `task` tool starts, the token and dollar totals and the allowance readouts, what the model
 * catalog says of the model in use (its window and prices go into every run: `budget.ts`,
 * `model_facts.ts`), and one stream of events. `amber run`, `amber demo`, the interactive session
 * and `task` all drive it; a front end renders its events and answers its two questions: may this
 * tool run (the turn's `ask`), and stop (the turn's `signal`). It compacts the conversation when
 * asked (`compact`). Its events reach front ends with the keys it knows of redacted
 * (`known_keys.ts`), and its open conversation holds the session file's lock while it has the
 * file (`conversation.ts`); each `task` sub-agent has a file of its own (`subagent_sessions.ts`).
 *
 * @module
 */

import type { McpSamplingRequest, McpSamplingResult } from "@amber/mcp";
import {
  type ApprovalPolicy,
  costOf,
  type Message,
  type ModelInfo,
  type StatusSnapshot,
  type SubagentRunOptions,
  type SubagentService,
  type TokenUsage,
} from "@amber/core";
import {
  compactConversation,
  runAgent,
  type RunEvent,
  type RunResult,
  SessionFile,
} from "@amber/core/kernel";
import { ProviderClient } from "@amber/providers/client";
import type { Host } from "../host.ts";
import {
  accountSettings,
  type ProviderOverrides,
  requireKey,
  type ResolvedProvider,
  withImages,
} from "../provider_settings.ts";
import { pricedEvent, type RunBudget, runBudget, savedCost, Spending } from "./budget.ts";
import { Conversation } from "./conversation.ts";
import type { SessionEvent, SessionListener } from "./events.ts";
import { ModelFacts } from "./model_facts.ts";
import { priceMemoFor } from "./price_memo.ts";
import type {
  AgentSessionOptions,
  ApprovalHandler,
  CompactionOutcome,
  TurnOptions,
} from "./session_types.ts";
import { allowanceRecorder, providerSnapshot, resolveProviderFor } from "./provider.ts";
import { SessionPermissions } from "./permissions.ts";
import { SessionApprovals } from "./approvals.ts";
import { ProtectedPaths, protectedPathsGate } from "./protected_paths.ts";
import { configuredKeys } from "./redact.ts";
import { KnownKeys } from "./known_keys.ts";
import type { SamplingParams } from "./sampling.ts";
import { SubagentSessions } from "./subagent_sessions.ts";
import type { RunExtras } from "./agent_runs.ts";
import { KeyRejections } from "./key_rejections.ts";
import { ReplyWatch } from "./reply_watch.ts";

const NEVER = new AbortController().signal;

/**
 * One agent session. See the module documentation of `@amber/cli/session` for an example
 * that runs a turn.
 */
export class AgentSession {
  readonly #options: AgentSessionOptions;
  readonly #listeners = new Set<SessionListener>();
  // The `task` tool's service. The host needs it before its plugins start (so `task` installs),
  // and the session needs the started host: so the session exists first, owns this object and
  // hands it to the host it opens. No holder is bound later: `run` is this session's method from
  // the start, and nothing can call it before `open` returns, as `task` runs only inside a turn.
  readonly #subagents: SubagentService = {
    run: (prompt, options) => this.#subagent(prompt, options),
  };
  #host: Host | undefined;
  readonly #tasks = new SubagentSessions();
  readonly #approvals = new SessionApprovals("ask");
  // Set by `open` before anyone holds the session.
  #permissions!: SessionPermissions;
  #overrides: ProviderOverrides;
  #resolved: ResolvedProvider | undefined;
  #client: ProviderClient | undefined;
  #key: string | undefined;
  #problem: Error | undefined;
  readonly #keys = new KnownKeys();
  // Set by `open` before anyone holds the session.
  #conversation!: Conversation;
  #usage = { promptTokens: 0, completionTokens: 0 };
  readonly #spending = new Spending();
  readonly #facts = new ModelFacts();
  // Where the price table's answers are kept: the process's own cache folder, not `options.env`
  // (that reads the provider's key).
  readonly #priceMemo = priceMemoFor();
  #busy = false;
  #ask: ApprovalHandler | undefined;

  private constructor(options: AgentSessionOptions) {
    this.#options = options;
    this.#overrides = { ...options.overrides };
  }

  /**
   * Opens a session: opens the host with the session's sub-agent service, then resolves the
   * provider once (a problem is kept and said by {@linkcode AgentSession.problem}, not thrown).
   */
  static async open(options: AgentSessionOptions): Promise<AgentSession> {
    const session = new AgentSession(options);
    const host = await options.openHost({ subagents: session.#subagents });
    session.#host = host;
    session.#conversation = new Conversation(host.configDir);
    session.#approvals.setPolicy(options.approval ?? host.config.approval ?? "ask");
    session.#permissions = await SessionPermissions.load({
      configDir: host.configDir,
      workspace: host.workspace,
      config: host.config,
      home: options.env?.("HOME") ?? Deno.env.get("HOME"),
    });
    session.#resolve();
    return session;
  }

  /** The started host the session runs on. */
  get host(): Host {
    // Set by `open` before anyone holds the session.
    return this.#host!;
  }

  /** Listens to the session's events; returns what stops listening. */
  subscribe(listener: SessionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The session id, once the first turn created the file (or one was resumed). */
  get id(): string | undefined {
    return this.#conversation.id;
  }

  /** The model in use (what was asked for, when the provider could not be resolved). */
  get model(): string {
    return this.#resolved?.model ?? this.#overrides.model ?? this.host.config.model ?? "";
  }

  /** The provider preset in use. */
  get provider(): string {
    return this.#resolved?.preset.name ?? this.#overrides.provider ?? "";
  }

  /** The command-line settings as they stand after switching model or provider. */
  get overrides(): ProviderOverrides {
    return this.#overrides;
  }

  /** The approval policy. */
  get approval(): ApprovalPolicy {
    return this.#approvals.policy;
  }

  /**
   * Switches the approval policy. A turn runs under the policy it starts with, except that one
   * started under `ask` puts its next question to the new policy (see `approvals.ts`).
   */
  setApproval(policy: ApprovalPolicy): void {
    this.#approvals.setPolicy(policy);
  }

  /** Why no turn can run (no key, unknown provider), if that is so. */
  get problem(): string | undefined {
    return this.#problem?.message;
  }

  /** Throws the error that keeps turns from running, if there is one (for `amber run`). */
  ready(): void {
    if (this.#problem !== undefined) throw this.#problem;
  }

  /**
   * `text` with every key the session knows of replaced by `[redacted]`: for what a front end
   * prints that did not come as an event (an error, a diagnostic). Events come redacted.
   */
  redact(text: string): string {
    return this.#keys.redact(text);
  }

  /** The conversation so far. */
  get messages(): readonly Message[] {
    return this.#conversation.messages;
  }

  /**
   * The permission rules in force (config.yaml's, the workspace's, amber's own): the kernel asks
   * them for every call; `/permissions` lists, trusts and removes through them.
   */
  get permissions(): SessionPermissions {
    return this.#permissions;
  }

  /** What the front end should say when the session starts (an untrusted rules file). */
  get notices(): readonly string[] {
    return this.#permissions.notices.map((text) => this.#keys.redact(text));
  }

  /** The tools answered "always" in this session, asked no more until a reset or resume. */
  get allowed(): readonly string[] {
    return this.#approvals.allowed;
  }

  /** Tokens over every turn of this session (sub-agents not included). */
  get usage(): { readonly promptTokens: number; readonly completionTokens: number } {
    return { ...this.#usage };
  }

  /**
   * Dollars over the session (a resumed one's earlier steps, sub-agents and sampling included),
   * or undefined while no call's price was known. Calls whose model had no known prices count
   * nothing.
   */
  get cost(): number | undefined {
    return this.#spending.session;
  }

  /**
   * Dollars of the turn running, or of the last one (its sub-agents included); undefined when
   * no call's price was known, and after a reset.
   */
  get turnCost(): number | undefined {
    return this.#spending.turn;
  }

  /**
   * What the catalog says of the model in use (its window, prices, abilities), as learned
   * before the last turn or compaction; only its id until then, and after a switch.
   */
  get info(): ModelInfo {
    return this.#facts.known(this.provider, this.model);
  }

  /** The account request for wallet and allowance readouts, when the provider resolved. */
  account(): { provider: string; baseUrl: string; apiKey?: string } | undefined {
    return this.#resolved === undefined ? undefined : accountSettings(this.#resolved);
  }

  /** The status snapshot of the session's provider: model, effort, wallet and allowance. */
  snapshot(): StatusSnapshot {
    return providerSnapshot(this.host.registries, this.#resolved, this.model);
  }

  /** Switches the model; returns what the session uses now. */
  setModel(model: string): string {
    this.#overrides = { ...this.#overrides, model };
    this.#resolve();
    return this.#describe();
  }

  /** Switches the provider preset (its default model, unless one was set since). */
  setProvider(provider: string): string {
    const { model: _model, baseUrl: _baseUrl, ...rest } = this.#overrides;
    this.#overrides = { ...rest, provider };
    this.#resolve();
    return this.#describe();
  }

  /**
   * Runs one turn of the conversation; every step is committed before the next starts. The
   * first turn creates the session file; when it fails without a word from the model (no
   * connection, a refused key, an unknown model) the file and its lock are removed again, and the
   * next turn starts a new session. A cancel keeps the prompt in the file, as does a reply that
   * could not be read. A 401 names the key's variable. Rejects when the provider cannot be used.
   */
  async turn(prompt: string, options: TurnOptions = {}): Promise<RunResult> {
    this.ready();
    const signal = options.signal ?? NEVER;
    this.#spending.startTurn();
    // What a command's turn changes (its model, its allowed tools) loads only for such a turn.
    const turns = options.command === undefined ? undefined : await import("./command_turns.ts");
    const command = turns?.commandRunExtras(options.command, this.#resolved!.model) ?? {};
    const budget = await this.#budget(command.modelName);
    const conversation = this.#conversation;
    let file = conversation.file;
    const created = file === undefined;
    if (file === undefined) {
      file = await conversation.start((id) => this.#create(id, prompt));
      this.#emit({ type: "session", id: file.id, resumed: false });
    }
    const firstStep = conversation.step;
    let next = firstStep;
    // Whether the model said anything: a first turn refused before that is no conversation.
    const reply = new ReplyWatch();
    const keyText = new KeyRejections(this.#resolved!);
    this.#ask = options.ask;
    this.#busy = true;
    try {
      const run = await this.#run(prompt, file, signal, budget, {
        ...command,
        history: conversation.messages,
        historyState: conversation.state,
        firstStep,
        onEvent: (event) => {
          reply.see(event);
          if (event.type === "stepEnd") {
            next = event.step + 1;
            // Priced by the kernel with the budget's `price`, as the turn's count goes.
            this.#spending.step(event.cost);
          }
          this.#emit(pricedEvent(keyText.event(event), budget));
        },
      });
      const result = turns?.commandTurnResult(keyText.result(run), options.command, this.model) ??
        keyText.result(run);
      conversation.advance(result, next);
      this.#count(result.usage);
      this.#spending.runEnded(result.cost);
      if (created && reply.refused(result.cause)) await conversation.discard();
      return result;
    } catch (error) {
      // The run broke off without its result: what the file holds is the conversation now.
      await conversation.reload();
      throw this.#keys.redactError(error);
    } finally {
      this.#ask = undefined;
      this.#busy = false;
      // Text held back as a possible start of a key goes out with the turn, however it ended.
      this.#keys.flush((event) => this.#deliver(event));
    }
  }

  /**
   * Answers an MCP server's sampling request with one model call through the session's
   * provider and model: the request's messages, system prompt, `maxTokens` and temperature, no
   * tools. The answer is text; a key the session knows of is redacted from it before the server
   * sees it, and its tokens count in {@linkcode AgentSession.usage}. Nothing is written to the
   * session file. The front end has the user approve each request before calling this. Rejects
   * with a `SamplingError` when the call fails or `signal` aborts it, and with the session's
   * problem when no provider can be used.
   */
  async sample(request: McpSamplingRequest, signal: AbortSignal): Promise<McpSamplingResult> {
    this.ready();
    // What the SDK checked against the specification's schema before handing it over.
    const params = request as unknown as SamplingParams;
    const { sampleThrough } = await import("./sampling.ts");
    const info = await this.#modelInfo();
    const answer = await sampleThrough(this.#client!, this.#resolved!.model, params, signal);
    this.#count(answer.usage);
    this.#spend(costOf(answer.usage, info.prices));
    const content = answer.result.content;
    return content.type === "text"
      ? { ...answer.result, content: { ...content, text: this.#keys.redact(content.text) } }
      : answer.result;
  }

  /**
   * Continues session `id`: its conversation becomes this one's, and the approvals answered
   * "always" are forgotten. A cut-off last line is moved aside and said as a `torn` event.
   */
  async resume(id: string): Promise<{ readonly messages: readonly Message[]; tornTo?: string }> {
    const resumed = await this.#conversation.resume(id, this.#keys.values);
    this.#approvals.forget();
    this.#spending.resume(savedCost(resumed.session));
    if (resumed.tornTo !== undefined) this.#emit({ type: "torn", id, movedTo: resumed.tornTo });
    this.#emit({ type: "session", id, resumed: true });
    const messages = this.#conversation.messages;
    return resumed.tornTo === undefined ? { messages } : { messages, tornTo: resumed.tornTo };
  }

  /** Starts over: the next turn opens a new session file; "always" answers are forgotten. */
  reset(): void {
    this.#conversation.forget();
    this.#approvals.forget();
    this.#spending.forget();
  }

  /**
   * Compacts the conversation now (`/compact`): the session's provider summarizes what came
   * before the last turns, as `instructions` ask (what to keep), and the compacted conversation
   * replaces the history, recorded in the session file (`--resume` continues from it; the full
   * history stays on disk). The compaction's events (`compactionStarted`, `compactionFinished`)
   * go to the listeners like a turn's. With no conversation yet nothing is created, and the
   * outcome says so. Rejects while a turn runs, and when no provider can be used.
   */
  async compact(
    instructions?: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<CompactionOutcome> {
    this.ready();
    if (this.#busy) throw new Error("a turn is running: compact after it ends");
    const conversation = this.#conversation;
    const file = conversation.file;
    if (file === undefined || conversation.messages.length === 0) {
      return {
        compacted: false,
        tokensBefore: 0,
        tokensAfter: 0,
        message: "there is no conversation to compact yet",
      };
    }
    this.#busy = true;
    try {
      const { autoCompact: _auto, ...budget } = await this.#budget();
      const wanted = instructions?.trim();
      const { messages, usage, cost, ...outcome } = await compactConversation({
        ...budget,
        runtime: this.host.runtime,
        model: this.#client!,
        modelName: this.#resolved!.model,
        history: conversation.messages,
        historyState: conversation.state,
        session: file,
        step: conversation.step,
        ...(wanted ? { instructions: wanted } : {}),
        signal: options.signal ?? NEVER,
        onEvent: (event: RunEvent) => this.#emit(pricedEvent(event, budget)),
      });
      if (outcome.compacted) conversation.compacted(messages);
      // The summary is a model call like any other: its tokens and dollars are the session's.
      if (usage !== undefined) this.#count(usage);
      this.#spending.spend(cost, false);
      return outcome;
    } catch (error) {
      throw this.#keys.redactError(error);
    } finally {
      this.#busy = false;
      this.#keys.flush((event) => this.#deliver(event));
    }
  }

  /** Closes the session file (the host is the opener's to close). */
  close(): void {
    this.#conversation.close();
  }

  // Tokens of a turn, a compaction's summary or a sampling call: the session's count.
  #count(usage: TokenUsage): void {
    this.#usage.promptTokens += usage.promptTokens;
    this.#usage.completionTokens += usage.completionTokens;
  }

  #emit(event: SessionEvent): void {
    if (event.type === "session") this.host.processes.session = event.id;
    this.#keys.apply(event, (redacted) => this.#deliver(redacted));
  }

  #deliver(event: SessionEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  // Called whenever the provider is resolved: the key in use may have changed.
  #learnSecrets(keyEnv: string | undefined): void {
    const env = this.#options.env ?? ((name: string) => Deno.env.get(name));
    const keys = configuredKeys(this.host, env, keyEnv);
    if (this.#key !== undefined) keys.push(this.#key);
    this.#keys.learn(keys, (event) => this.#deliver(event));
  }

  #describe(): string {
    if (this.#problem !== undefined) return `cannot use it: ${this.#problem.message}`;
    return `provider ${this.provider}, model ${this.model}`;
  }

  // The one place a session file is created: a turn's, or a sub-agent's.
  #create(id: string, prompt: string): Promise<SessionFile> {
    return SessionFile.create(this.host.configDir, {
      id,
      workspace: this.host.workspace,
      provider: this.#resolved!.preset.name,
      model: this.#resolved!.model,
      title: prompt.replace(/\s+/g, " ").slice(0, 80),
    }, this.#keys.values);
  }

  #resolve(): void {
    const resolution = resolveProviderFor(this.host, this.#overrides, this.#options.env);
    try {
      if (!resolution.ok) throw resolution.error;
      const resolved = resolution.resolved;
      this.#key = requireKey(resolved);
      this.host.processes.withhold(this.#key);
      this.#use(resolved);
      this.#problem = undefined;
    } catch (error) {
      this.#problem = error instanceof Error ? error : new Error(String(error));
    }
    this.#learnSecrets(resolution.ok ? resolution.resolved.keyEnv : undefined);
  }

  #use(resolved: ResolvedProvider): void {
    this.#resolved = resolved;
    this.#client = new ProviderClient(resolved.flavor.dialect(), resolved.settings, {
      onRetry: (info) =>
        this.#emit({
          type: "retry",
          message: `${info.message}; retrying in ${(info.delayMs / 1000).toFixed(1)} s ` +
            `(attempt ${info.attempt + 1})`,
        }),
    });
  }

  // What the catalog says of the model in use (see `ModelFacts`). A model nobody describes has
  // only its id: the kernel then compacts only after an overflow, and no cost shows.
  async #modelInfo(): Promise<ModelInfo> {
    const resolved = this.#resolved!;
    const { models } = this.host.config;
    const info = await this.#facts.learn(resolved.preset, resolved.model, this.#client!, {
      overrides: models,
      priceMemo: this.#priceMemo,
    });
    // The catalog knows better than the preset whether this model takes images (unless the
    // session switched while it was asked).
    const images = withImages(resolved, info.abilities?.images);
    if (this.#resolved === resolved && images !== resolved) this.#use(images);
    return info;
  }

  // The run options for the model in use: its figures as known at each request, so a window
  // the provider's listing reports mid-turn counts from then on.
  async #budget(agentModel?: string): Promise<RunBudget> {
    const { preset, model } = this.#resolved!;
    await this.#modelInfo();
    return runBudget(
      () => this.#facts.known(preset.name, agentModel ?? model),
      this.#options.compactAt,
      this.host.config.compaction,
    );
  }

  // Dollars spent: the session's, and the running turn's while there is one.
  #spend(cost: number | undefined): void {
    this.#spending.spend(cost, this.#busy);
  }

  #run(
    prompt: string,
    file: SessionFile,
    signal: AbortSignal,
    budget: RunBudget,
    extra: RunExtras,
  ): Promise<RunResult> {
    const resolved = this.#resolved!;
    return runAgent({
      ...budget,
      ...extra,
      // write, edit and bash touching amber's config directory are put to the user, always.
      hostGate: protectedPathsGate(
        new ProtectedPaths({ configDir: this.host.configDir, workspace: this.host.workspace }),
        {
          refusal: () =>
            this.#approvals.policy === "deny"
              ? "the approval policy is deny"
              : this.#ask === undefined
              ? "there is no one to ask; run amber in a terminal to confirm it"
              : undefined,
          next: extra.hostGate,
        },
      ),
      runtime: this.host.runtime,
      model: extra.model ?? this.#client!,
      modelName: extra.modelName ?? resolved.model,
      reasoningEffort: resolved.reasoningEffort,
      prompt,
      session: file,
      approval: this.#approvals.policy,
      permissions: (call) => this.#permissions.decide(call),
      // Without a handler the kernel itself denies, saying how to allow.
      ask: this.#ask === undefined
        ? undefined
        : (request) => this.#approvals.answer(request, signal, this.#ask),
      maxSteps: this.#options.maxSteps ?? 50,
      signal,
      // A tool that prints a key (a file holding one, `env`) must not hand it to the model.
      redact: (text) => this.#keys.redact(text),
      onResponse: allowanceRecorder(this.host, resolved, this.#client!),
    });
  }

  // A sub-agent runs on the session's provider and environment, with a file of its own.
  async #subagent(prompt: string, { signal, agent }: SubagentRunOptions): Promise<string> {
    this.ready();
    const { subagentRun } = await import("./agent_runs.ts");
    const as = subagentRun(agent, this.#resolved!.model, this.#client!, this.host);
    const budget = await this.#budget(as.options.modelName);
    const parent = this.#conversation.id;
    const create = (id: string) => this.#create(id, prompt);
    return await this.#tasks.run(this.host.configDir, parent, create, async (file) => {
      const result = await this.#run(prompt, file, signal, budget, as.options);
      this.#spend(result.cost);
      return as.answer(result);
    });
  }
}
