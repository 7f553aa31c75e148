/**
 * What an MCP server may ask of the interactive session, put to the user in dialogs.
 *
 * Sampling: each request is approved on its own (never remembered), showing the server and the
 * first line of what it asks the model; approved, it goes to the session's provider
 * (`AgentSession.sample`), declined, the server gets the error "the user declined".
 *
 * Elicitation: the server's message is shown with a choice to answer or decline; answering asks
 * each field of the requested schema in turn (text and numbers as a line, a boolean or an enum as
 * a choice, a multi-select as a comma-separated line), checked against the field's limits and
 * asked again until it passes. Esc at any point cancels the request. A URL request shows the URL
 * and asks whether the user went there.
 *
 * Headless (`amber run`) no handler is set and the servers' requests are declined there.
 *
 * @module
 */

import type { UiService } from "@amber/core";
import type {
  McpElicitationRequest,
  McpElicitationResult,
  McpSamplingRequest,
  McpSamplingResult,
} from "@amber/mcp";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  CreateMessageRequest,
  ElicitRequest,
  ElicitResult,
  PrimitiveSchemaDefinition,
} from "@modelcontextprotocol/sdk/types.js";
import { SamplingError, samplingMessageText } from "../session/sampling.ts";

/** The dialogs the requests are asked in. */
export type McpAsker = Pick<UiService, "askText" | "choose" | "confirm" | "notify">;

/** Answers a sampling request once the user approved it: the session's `sample`. */
export type Sampler = (
  params: McpSamplingRequest,
  signal: AbortSignal,
) => Promise<McpSamplingResult>;

/** The handlers the session gives its MCP servers (`McpServers.setHandlers`). */
export interface McpDialogHandlers {
  /** Asks the user, then samples through the session. */
  sample(
    params: McpSamplingRequest,
    signal: AbortSignal,
    server: string,
  ): Promise<McpSamplingResult>;
  /** Asks the user what the server wants to know. */
  elicit(
    params: McpElicitationRequest,
    signal: AbortSignal,
    server: string,
  ): Promise<McpElicitationResult>;
}

const FIRST_LINE_CELLS = 80;

/**
 * The question a sampling request is approved with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { samplingQuestion } from "./mcp_requests.ts";
 * assert.equal(
 *   samplingQuestion("everything", {
 *     maxTokens: 100,
 *     messages: [{ role: "user", content: { type: "text", text: "\nSummarise this:\nlong text" } }],
 *   }),
 *   "MCP server everything asks the model: Summarise this:… Allow?",
 * );
 * ```
 */
export function samplingQuestion(server: string, params: CreateMessageRequest["params"]): string {
  const text = params.messages.map(samplingMessageText).join("\n").trim();
  const lines = text.split("\n");
  let first = lines[0].trim();
  let cut = lines.length > 1;
  if (first.length > FIRST_LINE_CELLS) {
    first = first.slice(0, FIRST_LINE_CELLS - 1);
    cut = true;
  }
  return `MCP server ${server} asks the model: ${first}${cut ? "…" : ""} Allow?`;
}

/**
 * The handlers of an interactive session: sampling approved by the user each time, then
 * answered by `sample`; elicitation asked through `ui`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpDialogHandlers } from "./mcp_requests.ts";
 * const asked: string[] = [];
 * const ui = {
 *   askText: () => Promise.resolve(undefined),
 *   choose: () => Promise.resolve(undefined),
 *   confirm: (question: string) => (asked.push(question), Promise.resolve(false)),
 *   notify: () => {},
 * };
 * const handlers = mcpDialogHandlers(ui, () => Promise.reject(new Error("not reached")));
 * const params = { maxTokens: 9, messages: [{ role: "user" as const, content: { type: "text" as const, text: "Hi" } }] };
 * await assert.rejects(handlers.sample(params, new AbortController().signal, "basic"), /the user declined/);
 * assert.deepEqual(asked, ["MCP server basic asks the model: Hi Allow?"]);
 * ```
 */
export function mcpDialogHandlers(ui: McpAsker, sample: Sampler): McpDialogHandlers {
  return {
    async sample(params, signal, server) {
      // What the SDK checked against the specification's schema before handing it over.
      const request = params as unknown as CreateMessageRequest["params"];
      const allowed = await ui.confirm(samplingQuestion(server, request), { signal });
      if (!allowed) throw new SamplingError("the user declined");
      return await sample(params, signal);
    },
    elicit: (params, signal, server) =>
      elicit(ui, params as unknown as ElicitRequest["params"], signal, server),
  };
}

/**
 * Asks the user what an elicitation request wants, field by field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { elicit } from "./mcp_requests.ts";
 * const answers = ["answer", "Ada", "yes"];
 * const ui = {
 *   askText: () => Promise.resolve(answers.shift()),
 *   choose: <T extends string>() => Promise.resolve(answers.shift() as T),
 *   confirm: () => Promise.resolve(true),
 *   notify: () => {},
 * };
 * const result = await elicit(ui, {
 *   message: "Who are you?",
 *   requestedSchema: {
 *     type: "object",
 *     properties: { name: { type: "string" }, admin: { type: "boolean" } },
 *     required: ["name"],
 *   },
 * }, new AbortController().signal, "basic");
 * assert.deepEqual(result, { action: "accept", content: { name: "Ada", admin: true } });
 * ```
 */
export async function elicit(
  ui: McpAsker,
  params: ElicitRequest["params"],
  signal: AbortSignal,
  server: string,
): Promise<ElicitResult> {
  const who = `MCP server ${server}`;
  if (params.mode === "url") {
    ui.notify(`${who} asks you to open ${params.url}`, "info");
    const went = await ui.choose(
      `${who} asks you to open a page: ${params.message}\n${params.url}`,
      ["I opened it", "decline"],
      { signal },
    );
    if (went === undefined) return { action: "cancel" };
    return { action: went === "decline" ? "decline" : "accept" };
  }
  const properties = Object.entries(params.requestedSchema.properties);
  const start = await ui.choose(
    `${who} asks: ${params.message}`,
    properties.length === 0 ? ["accept", "decline"] : ["answer", "decline"],
    { signal },
  );
  if (start === undefined) return { action: "cancel" };
  if (start === "decline") return { action: "decline" };
  const required = new Set(params.requestedSchema.required ?? []);
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const [key, field] of properties) {
    const answer = await askField(ui, key, field, required.has(key), signal);
    if (answer === CANCEL) return { action: "cancel" };
    if (answer !== SKIP) content[key] = answer;
  }
  return { action: "accept", content };
}

const CANCEL = Symbol("cancel");
const SKIP = Symbol("skip");
const SKIP_LABEL = "(leave it out)";

type FieldAnswer = string | number | boolean | string[] | typeof CANCEL | typeof SKIP;

async function askField(
  ui: McpAsker,
  key: string,
  field: PrimitiveSchemaDefinition,
  required: boolean,
  signal: AbortSignal,
): Promise<FieldAnswer> {
  const label = `${field.title ?? key}${required ? "" : " (optional)"}${
    field.description ? `: ${field.description}` : ""
  }`;
  const optional = required ? [] : [SKIP_LABEL];
  if (field.type === "boolean") {
    const picked = await ui.choose(label, ["yes", "no", ...optional], { signal });
    if (picked === undefined) return CANCEL;
    return picked === SKIP_LABEL ? SKIP : picked === "yes";
  }
  const options = choices(field);
  if (field.type === "string" && options !== undefined) {
    const picked = await ui.choose(label, [...options.map((o) => o.title), ...optional], {
      signal,
    });
    if (picked === undefined) return CANCEL;
    if (picked === SKIP_LABEL) return SKIP;
    return options.find((o) => o.title === picked)?.value ?? picked;
  }
  let problem = "";
  for (;;) {
    const initial = "default" in field && field.default !== undefined
      ? (Array.isArray(field.default) ? field.default.join(", ") : String(field.default))
      : "";
    const typed = await ui.askText(problem ? `${label}\n${problem}` : label, { initial, signal });
    if (typed === undefined) return CANCEL;
    const text = typed.trim();
    if (text === "" && !required) return SKIP;
    const checked = checkText(field, text);
    if (typeof checked === "object" && "problem" in checked) problem = checked.problem;
    else return checked;
  }
}

// The options of a single-select string field, with what each shows.
function choices(
  field: PrimitiveSchemaDefinition,
): { readonly value: string; readonly title: string }[] | undefined {
  if (field.type !== "string") return undefined;
  if ("oneOf" in field) {
    const options: readonly { const: string; title: string }[] = field.oneOf;
    return options.map((option) => ({ value: option.const, title: option.title }));
  }
  if ("enum" in field) {
    const names: readonly string[] | undefined = "enumNames" in field ? field.enumNames : undefined;
    const values: readonly string[] = field.enum;
    return values.map((value, i) => ({ value, title: names?.[i] ?? value }));
  }
  return undefined;
}

// A typed line checked against its field: the value, or what is wrong with it.
function checkText(
  field: PrimitiveSchemaDefinition,
  text: string,
): string | number | string[] | { readonly problem: string } {
  if (field.type === "number" || field.type === "integer") {
    const value = Number(text);
    if (text === "" || !Number.isFinite(value)) return { problem: `'${text}' is not a number` };
    if (field.type === "integer" && !Number.isInteger(value)) {
      return { problem: `'${text}' is not a whole number` };
    }
    if (field.minimum !== undefined && value < field.minimum) {
      return { problem: `at least ${field.minimum}` };
    }
    if (field.maximum !== undefined && value > field.maximum) {
      return { problem: `at most ${field.maximum}` };
    }
    return value;
  }
  if (field.type === "array") {
    const anyOf: readonly { const: string }[] = "anyOf" in field.items ? field.items.anyOf : [];
    const allowed: readonly string[] = "enum" in field.items
      ? field.items.enum
      : anyOf.map((option) => option.const);
    const picked = text.split(",").map((word) => word.trim()).filter((word) => word !== "");
    const unknown = picked.filter((word) => !allowed.includes(word));
    if (unknown.length > 0) {
      return { problem: `not one of ${allowed.join(", ")}: ${unknown.join(", ")}` };
    }
    if (field.minItems !== undefined && picked.length < field.minItems) {
      return { problem: `pick at least ${field.minItems} of ${allowed.join(", ")}` };
    }
    if (field.maxItems !== undefined && picked.length > field.maxItems) {
      return { problem: `pick at most ${field.maxItems}` };
    }
    return picked;
  }
  if (text === "") return { problem: "an answer is required" };
  if ("minLength" in field && field.minLength !== undefined && text.length < field.minLength) {
    return { problem: `at least ${field.minLength} characters` };
  }
  if ("maxLength" in field && field.maxLength !== undefined && text.length > field.maxLength) {
    return { problem: `at most ${field.maxLength} characters` };
  }
  return text;
}
