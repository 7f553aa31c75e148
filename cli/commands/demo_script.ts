/**
 * What `amber demo` plays on: a small project with a typo in it, made in a scratch directory
 * kept for the user. And what `amber demo --interactive` plays: the scripted model's answers to
 * each prompt the user sends, whatever it says. Each prompt gets the next scripted turn: a plan
 * on the todo list and a look around; an edit (its diff shown after) and one outside the
 * workspace that asks for approval with its diff; a command whose output streams, the hello
 * plugin's tool and an answer; every prompt after that gets the closing answer.
 *
 * The answers are handed to the fake provider one request at a time, as the session reports
 * the request going out, so a turn that is cancelled or denied halfway never shifts the rest
 * of the script onto the next prompt.
 *
 * @module
 */

import { dirname, join } from "node:path";
import type { ScriptedTurn } from "@amber/providers/testing";
import type { SessionEvent } from "../session/mod.ts";

/**
 * The key the demo's session is given: the fake provider takes any key, and one this unlikely
 * cannot occur in the transcript it is redacted from.
 */
export const DEMO_KEY = "sk-amber-demo-0f3c9e7a51b2";

/**
 * The files of the demo's scratch workspace, by path relative to it. The changelog lies beside
 * the workspace, outside it: its edit is the one that asks for approval, showing its diff.
 */
export const DEMO_FILES: Readonly<Record<string, string>> = {
  "README.md": "# greeter\n\nPrints a greeting: `deno run src/greet.ts amber` prints " +
    "`Hello, amber!`.\n",
  "src/greet.ts":
    "export function greet(name: string): string {\n  return `Helo, ${name}!`;\n}\n\n" +
    'if (import.meta.main) console.log(greet(Deno.args[0] ?? "world"));\n',
  "AGENTS.md": "Keep changes minimal.\n",
  "../notes/CHANGELOG.md": "# Changelog\n\n- 0.1.0: first version\n",
};

/** The demo's scratch directory: the workspace and the config directory, kept afterwards. */
export interface DemoPlace {
  /** Holds both. */
  readonly root: string;
  /** The workspace, with {@linkcode DEMO_FILES} in it. */
  readonly workspace: string;
  /** amber's config directory for the demo (its sessions, its plugin states). */
  readonly configDir: string;
}

/**
 * Makes a new temporary directory with the demo's workspace (its files written) and an empty
 * config directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeDemoPlace } from "./demo_script.ts";
 * const place = await makeDemoPlace();
 * assert.match(await Deno.readTextFile(`${place.workspace}/src/greet.ts`), /Helo, /);
 * await Deno.remove(place.root, { recursive: true });
 * ```
 */
export async function makeDemoPlace(): Promise<DemoPlace> {
  const root = await Deno.makeTempDir({ prefix: "amber-demo-" });
  const workspace = join(root, "workspace");
  const configDir = join(root, "config");
  await Deno.mkdir(configDir, { recursive: true });
  for (const [path, text] of Object.entries(DEMO_FILES)) {
    const file = join(workspace, path);
    await Deno.mkdir(dirname(file), { recursive: true });
    await Deno.writeTextFile(file, text);
  }
  return { root, workspace, configDir };
}

/**
 * What the greeting of the interactive demo suggests trying, one line each. The one list of
 * keys and commands the demo names: change it here when a key moves.
 */
export const DEMO_TRIES: readonly string[] = [
  "type anything and press Enter: the scripted model answers with its next turn",
  "approve or deny the edit and the command when asked (the edit shows its diff)",
  "Ctrl-T shows or hides the todo list; Ctrl-X unfolds the last tool's output, Ctrl-Y shows all",
  "/plugins switches plugins on and off (hello gives the model its greet tool)",
  "/model picks a model, /permissions lists approval rules, @ completes a file path",
  "Ctrl-C cancels a turn; Ctrl-C twice (or /quit) leaves",
];

/**
 * The greeting shown when the interactive demo starts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { demoGreeting } from "./demo_script.ts";
 * const lines = demoGreeting("/tmp/amber-demo-x/workspace").split("\n");
 * assert.match(lines[0], /^amber demo: /);
 * assert.ok(lines.some((line) => line.includes("/tmp/amber-demo-x/workspace")));
 * assert.ok(lines.some((line) => line.includes("Ctrl-T")));
 * ```
 */
export function demoGreeting(workspace: string): string {
  return [
    "amber demo: the model is scripted (no key, no network); the tools, approvals, plugins and " +
    "transcript are the real thing.",
    `workspace: ${workspace}`,
    ...DEMO_TRIES.map((line) => `  · ${line}`),
  ].join("\n");
}

type PlanStatus = "pending" | "in_progress" | "completed";

// The demo's plan as `todowrite` sends it, its three items at these statuses.
function plan(find: PlanStatus, fix: PlanStatus, check: PlanStatus) {
  const items = { "Find the greeting": find, "Fix the typo": fix, "Check the result": check };
  const todos = Object.entries(items).map(([content, status]) => ({ content, status }));
  return { id: "call_plan", name: "todowrite", arguments: { todos } };
}

/** The scripted model's answers: one list of replies (one per model call) for each prompt. */
export const DEMO_TURNS: readonly (readonly ScriptedTurn[])[] = [
  [
    {
      text: "I'll plan this first, then look at the project.",
      toolCalls: [
        plan("in_progress", "pending", "pending"),
        { id: "call_read", name: "read", arguments: { path: "README.md" } },
      ],
      usage: { promptTokens: 1412, completionTokens: 96 },
    },
    {
      toolCalls: [{ id: "call_search", name: "search", arguments: { pattern: "Helo" } }],
      usage: { promptTokens: 1630, completionTokens: 24 },
    },
    {
      text: "The README promises `Hello, amber!` but `src/greet.ts` returns `Helo, …`.\n\n" +
        "Send anything to go on: I will fix it with `edit` (its row shows the diff) and note it " +
        "in the changelog, which asks for your approval first.",
      usage: { promptTokens: 1798, completionTokens: 52 },
    },
  ],
  [
    {
      toolCalls: [
        plan("completed", "in_progress", "pending"),
        {
          id: "call_edit",
          name: "edit",
          arguments: { path: "src/greet.ts", old_string: "`Helo, ", new_string: "`Hello, " },
        },
      ],
      usage: { promptTokens: 1911, completionTokens: 71 },
    },
    {
      text: "Fixed; the diff is in the edit's row. The changelog lies outside the workspace, so " +
        "its edit asks you first and shows what it would change.",
      toolCalls: [{
        id: "call_changelog",
        name: "edit",
        arguments: {
          path: "../notes/CHANGELOG.md",
          old_string: "- 0.1.0: first version\n",
          new_string: "- 0.1.0: first version\n- 0.1.1: the greeting says Hello\n",
        },
      }],
      usage: { promptTokens: 2040, completionTokens: 66 },
    },
    {
      text: "Send anything again: I will run a check with `bash` (it asks too); its output " +
        "streams into its row while it runs.",
      usage: { promptTokens: 2160, completionTokens: 30 },
    },
  ],
  [
    {
      toolCalls: [{
        id: "call_bash",
        name: "bash",
        arguments: {
          command: 'for step in lint test build; do echo "$step: ok"; sleep 0.6; done; ' +
            "grep -n Hello src/greet.ts",
        },
      }],
      usage: { promptTokens: 2233, completionTokens: 38 },
    },
    {
      toolCalls: [
        plan("completed", "completed", "completed"),
        { id: "call_greet", name: "greet", arguments: { name: "you" } },
      ],
      usage: { promptTokens: 2350, completionTokens: 45 },
    },
    {
      text: "All done: `greet()` now says `Hello, <name>!`, as the README promises, and the " +
        "check passed.\n\nThe `greet` tool came from the **hello** plugin: switch it off in " +
        "`/plugins` and the model is no longer offered it.",
      usage: { promptTokens: 2470, completionTokens: 58 },
    },
  ],
];

/** What every prompt after the script gets. */
export const DEMO_CLOSING: ScriptedTurn = {
  text: "That was the whole script. With a real model: `amber --provider <preset>` " +
    "(`amber providers` lists them). Leave with `/quit`.",
  usage: { promptTokens: 2540, completionTokens: 30 },
};

/** Where the scripted answers go: `FakeProvider.script`. */
export interface ScriptSink {
  /** Queues one answer for the next model call. */
  script(turn: ScriptedTurn): unknown;
}

/**
 * Feeds a fake provider the demo's answers, one per model call: the `n`th call of the `p`th
 * prompt gets `turns[p][n]`; a call past the end of its turn's list, and every prompt past the
 * script, gets `closing`. Subscribe {@linkcode DemoScript.listener} to the session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DemoScript } from "./demo_script.ts";
 * const queued: string[] = [];
 * const script = new DemoScript(
 *   { script: (turn) => queued.push(turn.text ?? "") },
 *   [[{ text: "a1" }, { text: "a2" }], [{ text: "b1" }]],
 *   { text: "done" },
 * );
 * script.listener({ type: "request", step: 1, tokens: 10 });
 * script.listener({ type: "end", cause: { kind: "cancelled" } });
 * script.listener({ type: "request", step: 1, tokens: 10 });
 * script.listener({ type: "end", cause: { kind: "completed" } });
 * script.listener({ type: "request", step: 1, tokens: 10 });
 * assert.deepEqual(queued, ["a1", "b1", "done"]);
 * ```
 */
export class DemoScript {
  readonly #sink: ScriptSink;
  readonly #turns: readonly (readonly ScriptedTurn[])[];
  readonly #closing: ScriptedTurn;
  #prompt = 0;
  #call = 0;

  /** A script over `sink`; the demo's own turns and closing answer by default. */
  constructor(
    sink: ScriptSink,
    turns: readonly (readonly ScriptedTurn[])[] = DEMO_TURNS,
    closing: ScriptedTurn = DEMO_CLOSING,
  ) {
    this.#sink = sink;
    this.#turns = turns;
    this.#closing = closing;
  }

  /** Which prompt the script is at (0 for the first). */
  get prompt(): number {
    return this.#prompt;
  }

  /**
   * The session listener: a request about to go out gets its answer queued first; the end of a
   * turn moves on to the next prompt's answers.
   */
  readonly listener = (event: SessionEvent): void => {
    if (event.type === "request") {
      this.#sink.script(this.#turns[this.#prompt]?.[this.#call] ?? this.#closing);
      this.#call++;
    } else if (event.type === "end") {
      this.#prompt++;
      this.#call = 0;
    }
  };
}
