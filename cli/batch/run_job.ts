/**
 * One batch job run as an amber session: the same {@linkcode AgentSession} `amber run` drives,
 * on the job's own workspace (a local folder, or a fresh clone of `repo` at `ref`) and its own
 * config directory (a fresh temporary one holding a copy of the worker's `config.yaml`, so the
 * worker's configuration applies, keys come from the worker's environment, and the session file
 * and plugin switches are the job's alone). The job's plugins are turned on there; its limits
 * hold: `maxSteps` (the session's own), `timeoutS` and `maxCost` (the turn is cancelled, and the
 * kernel commits what was done, as Ctrl-C does in `amber run`). A cancel from outside (a batch
 * cancel, a worker stopping) does the same. A job's `baseUrl` is used only when it is the
 * provider's own or one the worker allows (`base_url_policy.ts`); otherwise the job fails before
 * any request is made, so the worker's key goes nowhere a queue's writer chose.
 *
 * The result: the final answer, the exit status `amber run` would have had (0 completed, 1
 * failed or stopped by a limit, 130 cancelled), usage and cost, the session file's content, and
 * the workspace's diff (see `job_workspace.ts`). The session file is passed on as each step
 * commits, so a worker can keep the transcript of an attempt that dies.
 *
 * @module
 */

import { join, resolve } from "node:path";
import type { ApprovalPolicy, Diagnostic, Plugin, TokenUsage } from "@amber/core";
import { SessionFile } from "@amber/core/kernel";
import { openHost } from "../host.ts";
import type { EnvReader } from "../provider_settings.ts";
import { AgentSession, describeEnd, exitCodeOf, resolveProviderFor } from "../session/mod.ts";
import { checkJobBaseUrl } from "./base_url_policy.ts";
import type { JobSpec } from "./job_spec.ts";
import { openJobWorkspace } from "./job_workspace.ts";

/** Why a job's session was stopped before its natural end. */
export type JobStop = "timeout" | "maxCost" | "cancelled";

/** What {@linkcode runJob} takes besides the spec. */
export interface RunJobOptions {
  /** The plugins each job's host starts with. */
  readonly plugins: () => readonly Plugin[];
  /** The worker's config directory: its `config.yaml` is copied for each job. */
  readonly configDir: string;
  /** Tools that need approval: `auto` (allow) or `deny`; nobody is there to ask. */
  readonly approve?: Exclude<ApprovalPolicy, "ask">;
  /** Reads the worker's environment (provider keys); `Deno.env.get` by default. */
  readonly env?: EnvReader;
  /**
   * Base URLs besides the provider's own that a job's `baseUrl` may name (`allowBaseUrls` of
   * the worker's `batch.yaml`); none by default.
   */
  readonly allowBaseUrls?: readonly string[];
  /** Cancels the job: the session commits what it did and the result says `cancelled`. */
  readonly signal?: AbortSignal;
  /** Receives the session file's new whole lines after each committed step, in order. */
  readonly onTranscript?: (chunk: string) => void | Promise<void>;
  /** Receives the host's diagnostics (a plugin's fault); dropped otherwise. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** What a job's session did. */
export interface JobResult {
  /** The session's final answer: its last assistant text ("" when it gave none). */
  readonly answer: string;
  /** The exit status `amber run` would have had: 0, 1, or 130 when cancelled. */
  readonly exitCode: number;
  /** How the session ended, in words (`completed`, `stopped after 3 steps`, an error). */
  readonly end: string;
  /** What stopped the session early, when something did. */
  readonly stoppedBy?: JobStop;
  /** The model calls made. */
  readonly steps: number;
  /** The tokens of every model call. */
  readonly usage: TokenUsage;
  /** Dollars, when the model's prices are known. */
  readonly cost?: number;
  /** The session file's id. */
  readonly sessionId?: string;
  /** The session file's content (JSON lines). */
  readonly transcript: string;
  /** The workspace's changes, as `git diff --binary` writes them. */
  readonly diff: string;
}

/**
 * Runs `spec` as one session and returns what it did. Rejects when no session can run: a
 * workspace that cannot be made ready (`JobWorkspaceError`), a provider that cannot be used (no
 * key, unknown preset), a `baseUrl` the worker does not allow (`BaseUrlNotAllowedError`), a
 * plugin that cannot be turned on. Everything it makes is removed before it settles; a local
 * workspace keeps the session's changes.
 *
 * @example A job against amber's fake provider on loopback, which the worker allows
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeBundledPlugins } from "@amber/plugins";
 * import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
 * import { runJob } from "./run_job.ts";
 *
 * await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
 * server.script({ text: "All done.", usage: { promptTokens: 10, completionTokens: 3 } });
 * const workspace = await Deno.makeTempDir();
 * const configDir = await Deno.makeTempDir();
 * const result = await runJob(
 *   { workspace, prompt: "Say done.", provider: "openai", model: "m", baseUrl: `${server.url}/v1` },
 *   { plugins: makeBundledPlugins, configDir, env: () => "sk-fake", allowBaseUrls: [server.url] },
 * );
 * assert.equal(result.answer, "All done.");
 * assert.equal(result.exitCode, 0);
 * assert.deepEqual([result.usage.promptTokens, result.usage.completionTokens], [10, 3]);
 * assert.match(result.transcript, /"Say done\."/);
 * await Deno.remove(workspace, { recursive: true });
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function runJob(spec: JobSpec, options: RunJobOptions): Promise<JobResult> {
  const scratch = await Deno.makeTempDir({ prefix: "amber-job-" });
  try {
    const workspace = await openJobWorkspace(
      spec.repo === undefined
        ? { workspace: resolve(spec.workspace ?? "") }
        : { repo: spec.repo, ...(spec.ref === undefined ? {} : { ref: spec.ref }) },
      scratch,
      options.signal,
    );
    const configDir = join(scratch, "config");
    await Deno.mkdir(configDir);
    await copyIfThere(join(options.configDir, "config.yaml"), join(configDir, "config.yaml"));
    const ran = await runSession(spec, options, workspace.path, configDir);
    return { ...ran, diff: await workspace.diff() };
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

async function runSession(
  spec: JobSpec,
  options: RunJobOptions,
  workspace: string,
  configDir: string,
): Promise<Omit<JobResult, "diff">> {
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({
        ...services,
        plugins: options.plugins(),
        workspace,
        configDir,
        // A job runs what the worker's configuration and the job's selection name, nothing a
        // user once added by hand on that machine.
        thirdParty: false,
        mcp: { connect: true },
        ...(options.onDiagnostic === undefined ? {} : { onDiagnostic: options.onDiagnostic }),
      }),
    overrides: {
      ...(spec.provider === undefined ? {} : { provider: spec.provider }),
      ...(spec.model === undefined ? {} : { model: spec.model }),
      ...(spec.baseUrl === undefined ? {} : { baseUrl: spec.baseUrl }),
    },
    approval: options.approve ?? "auto",
    ...(spec.maxSteps === undefined ? {} : { maxSteps: spec.maxSteps }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const controller = new AbortController();
  let stoppedBy: JobStop | undefined;
  const stop = (why: JobStop) => {
    stoppedBy ??= why;
    controller.abort();
  };
  const onCancel = () => stop("cancelled");
  const timer = spec.timeoutS === undefined
    ? undefined
    : setTimeout(() => stop("timeout"), spec.timeoutS * 1000);
  let tail: TranscriptTail | undefined;
  try {
    session.ready();
    if (spec.baseUrl !== undefined) {
      // Where the worker itself would send this provider's requests; no key is read for it.
      const { baseUrl: _job, ...own } = session.overrides;
      const resolution = resolveProviderFor(session.host, own, () => undefined);
      if (!resolution.ok) throw resolution.error;
      checkJobBaseUrl({
        url: spec.baseUrl,
        provider: session.provider,
        ownUrl: resolution.resolved.settings.baseUrl,
        allowed: options.allowBaseUrls ?? [],
        settingsFile: join(options.configDir, "batch.yaml"),
      });
    }
    for (const id of spec.plugins ?? []) await session.host.runtime.setState(id, true);
    if (options.signal?.aborted) onCancel();
    options.signal?.addEventListener("abort", onCancel, { once: true });
    session.subscribe((event) => {
      if (event.type === "session") {
        tail = new TranscriptTail(SessionFile.pathOf(configDir, event.id), options.onTranscript);
      }
      // The header and the prompt are written before the first model call, each step as it
      // ends: a worker killed at any point leaves what was committed up to it.
      if (event.type === "session" || event.type === "stepStart" || event.type === "stepEnd") {
        void tail?.read();
      }
      if (event.type !== "stepEnd") return;
      const spent = session.turnCost;
      if (spec.maxCost !== undefined && spent !== undefined && spent > spec.maxCost) {
        stop("maxCost");
      }
    });
    const result = await session.turn(spec.prompt, { signal: controller.signal });
    // The steps committed after the last read (the cancelled one), and the last read's end.
    const transcript = await tail?.finish() ?? "";
    const answer = [...result.messages].reverse().find((message) => message.role === "assistant");
    const cause = result.cause;
    const exitCode = stoppedBy === "maxCost" ? 1 : exitCodeOf(cause);
    const cost = session.cost;
    const id = session.id;
    return {
      answer: session.redact(answer?.content ?? ""),
      exitCode,
      end: session.redact(
        endText(cause.kind === "cancelled" ? stoppedBy : undefined, spec) ??
          describeEnd(cause),
      ),
      ...(stoppedBy === undefined ? {} : { stoppedBy }),
      steps: result.steps,
      usage: result.usage,
      ...(cost === undefined ? {} : { cost }),
      ...(id === undefined ? {} : { sessionId: id }),
      transcript,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onCancel);
    session.close();
    await session.host.close();
  }
}

// How a session stopped by a limit or a cancel ended, in words.
function endText(stoppedBy: JobStop | undefined, spec: JobSpec): string | undefined {
  switch (stoppedBy) {
    case "timeout":
      return `timed out after ${spec.timeoutS} s (timeoutS)`;
    case "maxCost":
      return `stopped when its cost passed $${spec.maxCost} (maxCost)`;
    case "cancelled":
      return "cancelled";
    default:
      return undefined;
  }
}

async function copyIfThere(from: string, to: string): Promise<void> {
  try {
    await Deno.copyFile(from, to);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

// Reads a session file's new whole lines as it grows (it is appended to, one line per step,
// flushed before the next step starts) and hands them on in order, one read at a time.
class TranscriptTail {
  readonly #path: string;
  readonly #sink: ((chunk: string) => void | Promise<void>) | undefined;
  readonly #decoder = new TextDecoder();
  #text = "";
  #bytes = 0;
  #sent = 0;
  #reading: Promise<void> = Promise.resolve();

  constructor(path: string, sink: ((chunk: string) => void | Promise<void>) | undefined) {
    this.#path = path;
    this.#sink = sink;
  }

  read(): Promise<void> {
    this.#reading = this.#reading.then(async () => {
      await this.#readMore();
      const end = this.#text.lastIndexOf("\n") + 1;
      if (end <= this.#sent) return;
      const chunk = this.#text.slice(this.#sent, end);
      this.#sent = end;
      // A sink that fails (Redis gone) loses only the copy: the file and the result keep it.
      await Promise.resolve(this.#sink?.(chunk)).catch(() => {});
    });
    return this.#reading;
  }

  async finish(): Promise<string> {
    await this.read();
    return this.#text;
  }

  // What was appended since the last read; whole lines are what count, so a multi-byte
  // character cut at the end waits in the decoder for the rest.
  async #readMore(): Promise<void> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path, { read: true });
    } catch {
      return;
    }
    try {
      await file.seek(this.#bytes, Deno.SeekMode.Start);
      const buffer = new Uint8Array(64 * 1024);
      while (true) {
        const count = await file.read(buffer);
        if (count === null) break;
        this.#bytes += count;
        this.#text += this.#decoder.decode(buffer.subarray(0, count), { stream: true });
      }
    } finally {
      file.close();
    }
  }
}
