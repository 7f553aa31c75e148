// What each kind of server's `/models` answer says of its models. The bodies are written from
// the providers' documented formats (OpenAI-compatible servers: vLLM, llama.cpp, Groq, Mistral,
// OpenRouter; Gemini; Anthropic), trimmed to the fields that matter plus a few that do not.

import assert from "node:assert/strict";
import type { Dialect, ProviderSettings } from "@amber/core";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import { parseModelFacts } from "@amber/providers/model-catalog";
import { openaiDialect } from "@amber/providers/openai";
import { geminiDialect } from "@amber/providers/gemini";

Deno.test("OpenAI-compatible servers: each way of giving the window and the output limit", () => {
  const body = JSON.stringify({
    object: "list",
    data: [
      // vLLM
      { id: "Qwen/Qwen3-Coder-30B", object: "model", owned_by: "vllm", max_model_len: 65536 },
      // llama.cpp
      {
        id: "qwen2.5-coder-7b-q4_k_m.gguf",
        object: "model",
        meta: { n_ctx_train: 32768, n_params: 7615616512 },
      },
      // Groq
      {
        id: "llama-3.3-70b-versatile",
        object: "model",
        context_window: 131072,
        max_completion_tokens: 32768,
        active: true,
      },
      // Mistral
      {
        id: "devstral-medium-2507",
        object: "model",
        max_context_length: 131072,
        capabilities: { completion_chat: true, function_calling: true, vision: false },
      },
      // Ollama and OpenAI: nothing but the id
      { id: "gpt-oss:20b", object: "model", created: 1754000000, owned_by: "library" },
      // Not a model: skipped
      { object: "model" },
      { id: 7 },
    ],
  });
  assert.deepEqual(parseModelFacts(body), [
    { id: "Qwen/Qwen3-Coder-30B", contextWindow: 65536, sources: ["provider"] },
    { id: "qwen2.5-coder-7b-q4_k_m.gguf", contextWindow: 32768, sources: ["provider"] },
    {
      id: "llama-3.3-70b-versatile",
      contextWindow: 131072,
      maxOutput: 32768,
      sources: ["provider"],
    },
    {
      id: "devstral-medium-2507",
      contextWindow: 131072,
      abilities: { tools: true, images: false },
      sources: ["provider"],
    },
    { id: "gpt-oss:20b", sources: ["provider"] },
  ]);
});

Deno.test("OpenRouter: per-token price strings become dollars per million, abilities from parameters", () => {
  const body = JSON.stringify({
    data: [
      {
        id: "anthropic/claude-sonnet-4",
        name: "Anthropic: Claude Sonnet 4",
        context_length: 200000,
        architecture: { input_modalities: ["text", "image"], output_modalities: ["text"] },
        pricing: {
          prompt: "0.000003",
          completion: "0.000015",
          input_cache_read: "0.0000003",
          input_cache_write: "0.00000375",
          request: "0",
        },
        top_provider: { context_length: 200000, max_completion_tokens: 64000 },
        supported_parameters: ["max_tokens", "reasoning", "tools", "tool_choice"],
      },
      {
        id: "openrouter/auto",
        context_length: 2000000,
        pricing: { prompt: "-1", completion: "-1" },
        architecture: { input_modalities: ["text"] },
        supported_parameters: [],
      },
    ],
  });
  assert.deepEqual(parseModelFacts(body), [
    {
      id: "anthropic/claude-sonnet-4",
      name: "Anthropic: Claude Sonnet 4",
      contextWindow: 200000,
      maxOutput: 64000,
      prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      abilities: { tools: true, reasoning: true, images: true },
      sources: ["provider"],
    },
    {
      // A router's price depends on the model it picks: no price at all.
      id: "openrouter/auto",
      contextWindow: 2000000,
      abilities: { tools: false, reasoning: false, images: false },
      sources: ["provider"],
    },
  ]);
});

Deno.test("Gemini: names without models/, input and output limits, chat models only", () => {
  const body = JSON.stringify({
    models: [
      {
        name: "models/gemini-2.5-pro",
        version: "2.5",
        displayName: "Gemini 2.5 Pro",
        inputTokenLimit: 1048576,
        outputTokenLimit: 65536,
        supportedGenerationMethods: ["generateContent", "countTokens"],
        thinking: true,
      },
      {
        name: "models/text-embedding-004",
        inputTokenLimit: 2048,
        outputTokenLimit: 1,
        supportedGenerationMethods: ["embedContent"],
      },
    ],
    nextPageToken: "",
  });
  assert.deepEqual(parseModelFacts(body), [{
    id: "gemini-2.5-pro",
    name: "Gemini 2.5 Pro",
    contextWindow: 1048576,
    maxOutput: 65536,
    abilities: { reasoning: true },
    sources: ["provider"],
  }]);
});

Deno.test("Anthropic: max_input_tokens and max_tokens where the listing has them", () => {
  const body = JSON.stringify({
    data: [
      {
        type: "model",
        id: "claude-sonnet-4-5-20250929",
        display_name: "Claude Sonnet 4.5",
        created_at: "2025-09-29T00:00:00Z",
        max_input_tokens: 200000,
        max_tokens: 64000,
      },
      { type: "model", id: "claude-3-haiku-20240307", display_name: "Claude Haiku 3" },
    ],
    has_more: false,
    first_id: "claude-sonnet-4-5-20250929",
    last_id: "claude-3-haiku-20240307",
  });
  assert.deepEqual(parseModelFacts(body), [
    {
      id: "claude-sonnet-4-5-20250929",
      name: "Claude Sonnet 4.5",
      contextWindow: 200000,
      maxOutput: 64000,
      sources: ["provider"],
    },
    { id: "claude-3-haiku-20240307", name: "Claude Haiku 3", sources: ["provider"] },
  ]);
});

Deno.test("a body that is not a listing is an error, not an empty catalog", () => {
  assert.throws(() => parseModelFacts("<html>"), SyntaxError);
  assert.throws(() => parseModelFacts('{"object":"list"}'), TypeError);
  assert.throws(() => parseModelFacts("[]"), TypeError);
  // Figures that are not positive whole numbers are unknown, not zero.
  assert.deepEqual(
    parseModelFacts('{"data":[{"id":"m","context_length":0,"max_model_len":"4096"}]}'),
    [{ id: "m", sources: ["provider"] }],
  );
});

function answering(body: string, status = 200): {
  readonly fetch: typeof globalThis.fetch;
  readonly asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    fetch: (input) => {
      asked.push(String(input));
      return Promise.resolve(new Response(body, { status }));
    },
  };
}

Deno.test("listModelFacts sends the dialect's models request and reads the facts", async () => {
  const settings: ProviderSettings = { baseUrl: "http://127.0.0.1:8080/v1", apiKey: "sk-facts" };
  const openai = answering('{"data":[{"id":"local","meta":{"n_ctx_train":8192}}]}');
  const client = new ProviderClient(openaiDialect(), settings, { fetch: openai.fetch });
  assert.deepEqual(await client.listModelFacts(), [
    { id: "local", contextWindow: 8192, sources: ["provider"] },
  ]);
  assert.deepEqual(openai.asked, ["http://127.0.0.1:8080/v1/models"]);

  const gemini = answering(
    '{"models":[{"name":"models/gemini-x","inputTokenLimit":100,"outputTokenLimit":10}]}',
  );
  const geminiClient = new ProviderClient(
    geminiDialect(),
    { baseUrl: "http://127.0.0.1:9" },
    { fetch: gemini.fetch },
  );
  const [model] = await geminiClient.listModelFacts();
  assert.equal(model.id, "gemini-x");
  assert.equal(model.maxOutput, 10);
  assert.match(gemini.asked[0], /\/v1beta\/models\?pageSize=1000$/);
});

Deno.test("listModelFacts: an error answer or an unreadable body is a ProviderError naming the URL", async () => {
  const settings = { baseUrl: "http://127.0.0.1:8080/v1" };
  const failing = answering('{"error":{"message":"nope"}}', 401);
  await assert.rejects(
    new ProviderClient(openaiDialect(), settings, {
      fetch: failing.fetch,
      retry: { maxAttempts: 1 },
    })
      .listModelFacts(),
    (error) =>
      error instanceof ProviderError && error.status === 401 &&
      error.message.includes("http://127.0.0.1:8080/v1/models"),
  );
  const garbled = answering("not json");
  await assert.rejects(
    new ProviderClient(openaiDialect(), settings, { fetch: garbled.fetch }).listModelFacts(),
    (error) =>
      error instanceof ProviderError &&
      error.message.startsWith("the models listing from http://127.0.0.1:8080/v1/models"),
  );
  // A protocol that cannot list models says so before anything is sent.
  const bare = { flavor: "bare" } as Dialect;
  await assert.rejects(
    new ProviderClient(bare, settings).listModelFacts(),
    (error) =>
      error instanceof ProviderError && error.message === "the bare protocol cannot list models",
  );
});
