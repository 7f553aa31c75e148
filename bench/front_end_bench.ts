// The front ends that editors and programs drive, on the fake provider on loopback (it answers at
// once, so what is left is amber's own cost):
//
// first: the time from a prompt to the first event the front end streams (any event, and the
//   first text of the answer), for the same turn taken five ways, alternating in every round:
//   an `AgentSession` in this process (the floor: no front end at all), `amber serve` (started in
//   this process, driven over HTTP by the typed client: from the POST of the prompt to the first
//   Server-Sent Event read after its 202), `amber acp` (a subprocess on stdio, raw JSON-RPC: from
//   the `session/prompt` request to the first `session/update`), and `amber run --json` (a new
//   process each time: from its start to its first JSON line). "Warm" is a later prompt of a
//   session that already took one; "new" is the first prompt of a new session (a new process
//   for `amber acp`, which is also timed from its start).
// memory: heap and resident memory per idle session of `amber serve`: a server with one session,
//   then with `--sessions` more (50 by default), after a forced collection, in a process of its
//   own each round.
// concurrent: `--sessions` sessions of one server each take a turn at once; each stream is read
//   to its `end` and checked against the events of the same turn taken alone (types, order,
//   offsets without a gap, the text): a lost, repeated or reordered event counts as lost.
//
// deno run -A bench/front_end_bench.ts [--cases=first,memory,concurrent] [--sessions=50] [rounds]
//   [--only=in-process-new,http-warm,http-new,acp-warm,acp-new,run]   (some cases of `first`)
//
// Under `deno bench` (`deno task bench`) only the in-process pair of `first` runs, as
// `Deno.bench` cases: the others start processes that its permissions do not grant.

import { fileURLToPath } from "node:url";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { AmberClient } from "@amber/cli/serve-client";
import { openHost } from "../cli/host.ts";
import { type Server, startServer } from "../cli/serve/server.ts";
import { AgentSession } from "../cli/session/mod.ts";
import { benchArgs, inOrder, median } from "./_cases.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const MAIN = `${ROOT}/cli/main.ts`;
const KEY = "sk-bench-front-end";
const TOKEN = "bench-front-end-token";
const PROMPT = "What do the notes say?";
// Several chunks, so that a stream has text events to lose.
const TURN: ScriptedTurn = {
  text: "The notes say forty-two, and so does everyone else.",
  chunkSize: 6,
};

/** The fake provider, a config directory and a workspace, shared by every case of a run. */
interface Fixture extends AsyncDisposable {
  readonly provider: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  readonly baseUrl: string;
  /** The environment of an amber subprocess. */
  readonly env: Record<string, string>;
}

async function fixture(): Promise<Fixture> {
  const provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  const configDir = await Deno.makeTempDir({ prefix: "amber-bench-fe-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-bench-fe-ws-" });
  await Deno.writeTextFile(`${workspace}/notes.txt`, "forty-two\n");
  return {
    provider,
    configDir,
    workspace,
    baseUrl: `${provider.url}/v1`,
    env: { AMBER_CONFIG_DIR: configDir, OPENAI_API_KEY: KEY, NO_COLOR: "1", INIT_CWD: workspace },
    async [Symbol.asyncDispose]() {
      await provider.close();
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

/** Milliseconds from a start to the first event, and to the first text of the answer. */
interface FirstTimes {
  readonly event: number;
  readonly text: number;
}

// Started at a prompt; told each event's type as it arrives.
function stopwatch(start = performance.now()) {
  let event: number | undefined;
  let text: number | undefined;
  return {
    saw(type: string) {
      const at = performance.now() - start;
      event ??= at;
      if (type === "text") text ??= at;
    },
    times(): FirstTimes {
      if (event === undefined || text === undefined) throw new Error("the turn streamed no text");
      return { event, text };
    },
  };
}

// ---- in process -------------------------------------------------------------------------------

function openSession(f: Fixture): Promise<AgentSession> {
  return AgentSession.open({
    openHost: (services) =>
      openHost({
        ...services,
        plugins: makeBundledPlugins(),
        configDir: f.configDir,
        workspace: f.workspace,
        thirdParty: false,
      }),
    overrides: { provider: "openai", model: "fake-model", baseUrl: f.baseUrl },
    approval: "auto",
    env: (name) => name === "OPENAI_API_KEY" ? KEY : undefined,
  });
}

async function inProcessTurn(f: Fixture, session: AgentSession): Promise<FirstTimes> {
  f.provider.script(TURN);
  const watch = stopwatch();
  const stop = session.subscribe((event) => watch.saw(event.type));
  try {
    await session.turn(PROMPT);
  } finally {
    stop();
  }
  return watch.times();
}

async function closeSession(session: AgentSession): Promise<void> {
  session.close();
  await session.host.close();
}

// ---- amber serve ------------------------------------------------------------------------------

function serve(f: Fixture): Promise<Server> {
  return startServer({
    token: TOKEN,
    plugins: makeBundledPlugins,
    configDir: f.configDir,
    thirdParty: false,
    env: (name) => name === "OPENAI_API_KEY" ? KEY : undefined,
  });
}

function createSession(f: Fixture, client: AmberClient): Promise<{ id: string }> {
  return client.createSession({
    workspace: f.workspace,
    provider: "openai",
    model: "fake-model",
    baseUrl: f.baseUrl,
    approve: "auto",
  });
}

/** A prompt over HTTP, its events read to the end as an embedder reads them. */
async function httpTurn(f: Fixture, client: AmberClient, id: string): Promise<FirstTimes> {
  f.provider.script(TURN);
  const watch = stopwatch();
  const { from } = await client.prompt(id, { text: PROMPT });
  for await (const event of client.events(id, { from })) {
    watch.saw(event.type);
    if (event.type === "end") break;
  }
  return watch.times();
}

// ---- amber acp --------------------------------------------------------------------------------

/** `amber acp` in a subprocess, spoken to in newline-delimited JSON-RPC as an editor does. */
class AcpProcess {
  readonly started: number = performance.now();
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, (message: Record<string, unknown>) => void>();
  readonly #reading: Promise<void>;
  #next = 0;
  /** Told the kind of each `session/update` (`text` for the answer's chunks). */
  onUpdate: (kind: string) => void = () => {};

  constructor(f: Fixture) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "acp", "--approve", "auto", "--base-url", f.baseUrl],
      env: f.env,
      cwd: f.workspace,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reading = this.#read();
  }

  async request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.#next++;
    const { promise, resolve } = Promise.withResolvers<Record<string, unknown>>();
    this.#pending.set(id, resolve);
    await this.#send({ jsonrpc: "2.0", id, method, params });
    const answer = await promise;
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result as Record<string, unknown>;
  }

  /** Initializes and opens a session; its id. */
  async open(f: Fixture): Promise<string> {
    await this.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const opened = await this.request("session/new", { cwd: f.workspace, mcpServers: [] });
    return String(opened.sessionId);
  }

  async turn(f: Fixture, sessionId: string, start?: number): Promise<FirstTimes> {
    f.provider.script(TURN);
    const watch = stopwatch(start);
    this.onUpdate = (kind) => watch.saw(kind);
    await this.request("session/prompt", { sessionId, prompt: [{ type: "text", text: PROMPT }] });
    this.onUpdate = () => {};
    return watch.times();
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#child.status;
    await this.#reading;
  }

  #send(message: unknown): Promise<void> {
    return this.#writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  }

  async #read(): Promise<void> {
    for await (const line of lines(this.#child.stdout)) {
      const message = JSON.parse(line) as Record<string, unknown>;
      if (message.method === "session/update") {
        const update = (message.params as { update: { sessionUpdate: string } }).update;
        const kind = update.sessionUpdate;
        // The command list follows a session/new on its own time: no answer to a prompt.
        if (kind !== "available_commands_update") {
          this.onUpdate(kind === "agent_message_chunk" ? "text" : kind);
        }
      } else if (message.method !== undefined && message.id !== undefined) {
        // A question of the agent's this editor does not offer.
        const error = { code: -32601, message: "not offered" };
        await this.#send({ jsonrpc: "2.0", id: message.id, error });
      } else if (typeof message.id === "number") {
        this.#pending.get(message.id)?.(message);
        this.#pending.delete(message.id);
      }
    }
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line !== "") yield line;
    }
  }
}

// ---- amber run --json -------------------------------------------------------------------------

/** `amber run --json` from its start to its first JSON line, and to its first text. */
async function runTurn(f: Fixture): Promise<FirstTimes> {
  f.provider.script(TURN);
  const watch = stopwatch();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "run", PROMPT, "--json", "--base-url", f.baseUrl],
    env: f.env,
    cwd: f.workspace,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  for await (const line of lines(child.stdout)) watch.saw(JSON.parse(line).type);
  const status = await child.status;
  if (!status.success) throw new Error(`amber run --json exited with ${status.code}`);
  return watch.times();
}

// ---- the cases --------------------------------------------------------------------------------

const FIRST_CASES = [
  "in-process, warm",
  "in-process, new session",
  "HTTP, warm",
  "HTTP, new session",
  "ACP, warm",
  "ACP, new process (from the prompt)",
  "ACP, new process (from its start)",
  "amber run --json (from its start)",
] as const;
type FirstCase = typeof FIRST_CASES[number];

async function firstEvents(rounds: number, only: readonly string[] | undefined): Promise<void> {
  await using f = await fixture();
  const session = await openSession(f);
  await using server = await serve(f);
  const client = new AmberClient({ baseUrl: server.url, token: TOKEN });
  const { id } = await createSession(f, client);
  const acp = new AcpProcess(f);
  const acpSession = await acp.open(f);
  type Record = (name: FirstCase, times: FirstTimes) => void;
  // One measurement each, so that the order of all of them reverses every round; `--only=`
  // picks some by key (the floor, in-process-warm, always runs).
  const all: [string, (record: Record) => Promise<void>][] = [
    [
      "in-process-warm",
      async (record) => record("in-process, warm", await inProcessTurn(f, session)),
    ],
    ["in-process-new", async (record) => {
      const fresh = await openSession(f);
      record("in-process, new session", await inProcessTurn(f, fresh));
      await closeSession(fresh);
    }],
    ["http-warm", async (record) => record("HTTP, warm", await httpTurn(f, client, id))],
    ["http-new", async (record) => {
      const fresh = await createSession(f, client);
      record("HTTP, new session", await httpTurn(f, client, fresh.id));
      await client.deleteSession(fresh.id);
    }],
    ["acp-warm", async (record) => record("ACP, warm", await acp.turn(f, acpSession))],
    ["acp-new", async (record) => {
      const fresh = new AcpProcess(f);
      const freshSession = await fresh.open(f);
      const prompted = performance.now();
      const times = await fresh.turn(f, freshSession, prompted);
      record("ACP, new process (from the prompt)", times);
      const sinceStart = prompted - fresh.started;
      record("ACP, new process (from its start)", {
        event: times.event + sinceStart,
        text: times.text + sinceStart,
      });
      await fresh.close();
    }],
    ["run", async (record) => record("amber run --json (from its start)", await runTurn(f))],
  ];
  const steps = all.filter(([key]) =>
    only === undefined || key === "in-process-warm" || only.includes(key)
  ).map(([, step]) => step);
  const samples = new Map<FirstCase, FirstTimes[]>();
  const record: Record = (name, times) => samples.set(name, [...samples.get(name) ?? [], times]);
  // One round to warm Deno's module cache and the JIT, not counted.
  for (let round = -1; round < rounds; round++) {
    for (const step of inOrder(round + 1, steps)) await step(round < 0 ? () => {} : record);
  }
  await acp.close();
  await closeSession(session);
  const floor = median(samples.get("in-process, warm")!.map((t) => t.text));
  console.log(`prompt to first event, ${rounds} rounds, medians${loadAverage()}`);
  console.log(
    `${"".padEnd(38)}${"first event".padStart(12)}${"first text".padStart(12)}  text/floor`,
  );
  for (const name of FIRST_CASES) {
    const times = samples.get(name);
    if (times === undefined) continue;
    const event = median(times.map((t) => t.event));
    const text = median(times.map((t) => t.text));
    console.log(
      `${name.padEnd(38)}${ms(event).padStart(12)}${ms(text).padStart(12)}  ${
        (text / floor).toFixed(1)
      }x`,
    );
  }
}

/** Heap and RSS growth per idle served session, measured in a child with `--expose-gc`. */
async function memory(rounds: number, sessions: number): Promise<void> {
  const results: { heap: number; rss: number; heap0: number; rss0: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--v8-flags=--expose-gc",
        fileURLToPath(import.meta.url),
        "--child=memory",
        `--sessions=${sessions}`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!output.success) throw new Error("the memory child failed");
    results.push(JSON.parse(new TextDecoder().decode(output.stdout)));
  }
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(`memory per idle served session, ${rounds} processes, medians`);
  console.log(
    `  with 1 session: heap ${mb(median(results.map((r) => r.heap0)))}, RSS ${
      mb(median(results.map((r) => r.rss0)))
    }; each of ${sessions} more: heap +${kb(median(results.map((r) => r.heap)))}, RSS +${
      kb(median(results.map((r) => r.rss)))
    }`,
  );
}

async function memoryChild(sessions: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");
  await using f = await fixture();
  await using server = await serve(f);
  const client = new AmberClient({ baseUrl: server.url, token: TOKEN });
  // The first session loads what every session shares: it is not counted.
  await createSession(f, client);
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return Deno.memoryUsage();
  };
  const before = await settle();
  for (let i = 0; i < sessions; i++) await createSession(f, client);
  const after = await settle();
  console.log(JSON.stringify({
    heap0: before.heapUsed,
    rss0: before.rss,
    heap: (after.heapUsed - before.heapUsed) / sessions,
    rss: (after.rss - before.rss) / sessions,
  }));
}

/** `sessions` sessions of one server take a turn at once; every stream is checked. */
async function concurrent(rounds: number, sessions: number): Promise<void> {
  await using f = await fixture();
  await using server = await serve(f);
  const client = new AmberClient({ baseUrl: server.url, token: TOKEN });
  const streamOf = async (id: string) => {
    const { from } = await client.prompt(id, { text: PROMPT });
    const events: { offset: number; type: string; text: string }[] = [];
    for await (const event of client.events(id, { from })) {
      const delta = (event.data as { delta?: unknown }).delta;
      events.push({ offset: event.offset - from, type: event.type, text: String(delta ?? "") });
      if (event.type === "end") break;
    }
    return events;
  };
  // The same turn taken alone: what every stream must be.
  const solo = await createSession(f, client);
  f.provider.script(TURN);
  const expected = (await streamOf(solo.id)).map(({ offset, type, text }) =>
    `${offset}:${type}:${text}`
  );
  await client.deleteSession(solo.id);
  const times: number[] = [];
  let lost = 0;
  let wrong = 0;
  for (let round = 0; round < rounds; round++) {
    const ids = await Promise.all(
      Array.from({ length: sessions }, async () => (await createSession(f, client)).id),
    );
    f.provider.script(...Array.from({ length: sessions }, () => TURN));
    const start = performance.now();
    const streams = await Promise.all(ids.map(streamOf));
    times.push(performance.now() - start);
    for (const stream of streams) {
      const seen = stream.map(({ offset, type, text }) => `${offset}:${type}:${text}`);
      if (seen.join("\n") === expected.join("\n")) continue;
      wrong++;
      lost += expected.filter((event) => !seen.includes(event)).length;
    }
    await Promise.all(ids.map((id) => client.deleteSession(id)));
  }
  console.log(
    `${sessions} concurrent sessions on one server, ${rounds} rounds: all ended in ${
      ms(median(times))
    } (median); ${expected.length} events each; ${wrong} streams differed, ${lost} events lost`,
  );
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

// The load says how far to trust the wall times.
function loadAverage(): string {
  return Deno.permissions.querySync({ name: "sys", kind: "loadavg" }).state === "granted"
    ? `; load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`
    : "";
}

// ---- under deno bench -------------------------------------------------------------------------

// The in-process pair only, each iteration one whole turn (timed to its first text), a fixed
// number of them so that the warm session's conversation stays short.
function registerBenches(): void {
  let ready: Promise<{ f: Fixture; session: AgentSession; client: AmberClient; id: string }>;
  const setUp = () =>
    ready ??= (async () => {
      const f = await fixture();
      const session = await openSession(f);
      const server = await serve(f);
      const client = new AmberClient({ baseUrl: server.url, token: TOKEN });
      const { id } = await createSession(f, client);
      globalThis.addEventListener("unload", () => {
        Deno.removeSync(f.configDir, { recursive: true });
        Deno.removeSync(f.workspace, { recursive: true });
      });
      return { f, session, client, id };
    })();
  const group = "prompt to first text";
  const options = { group, n: 40, warmup: 5 };
  Deno.bench({ name: "in-process AgentSession turn", baseline: true, ...options }, async (b) => {
    const { f, session } = await setUp();
    f.provider.script(TURN);
    let first = false;
    const stop = session.subscribe((event) => {
      if (event.type === "text" && !first) (first = true, b.end());
    });
    b.start();
    await session.turn(PROMPT);
    stop();
  });
  Deno.bench({ name: "HTTP POST to first SSE text", ...options }, async (b) => {
    const { f, client, id } = await setUp();
    f.provider.script(TURN);
    let first = false;
    b.start();
    const { from } = await client.prompt(id, { text: PROMPT });
    for await (const event of client.events(id, { from })) {
      if (event.type === "text" && !first) (first = true, b.end());
      if (event.type === "end") break;
    }
  });
}

if (import.meta.main) {
  const args = benchArgs(9);
  const child = args.option("child");
  const sessions = Number(args.option("sessions") ?? 50);
  if (child === "memory") await memoryChild(sessions);
  else {
    if (args.wanted("first")) await firstEvents(args.rounds, args.option("only")?.split(","));
    if (args.wanted("memory")) await memory(Math.min(args.rounds, 5), sessions);
    if (args.wanted("concurrent")) await concurrent(Math.min(args.rounds, 5), sessions);
  }
} else {
  registerBenches();
}
