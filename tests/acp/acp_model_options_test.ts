// The model and mode options an ACP editor picks from, on a session in this process: which
// models are offered, and how picking one switches the session.

import assert from "node:assert/strict";
import { RequestError } from "@agentclientprotocol/sdk";
import { modelCatalog } from "@amber/providers/model-catalog";
import { openHost } from "../../cli/host.ts";
import { AgentSession } from "../../cli/session/mod.ts";
import type { ProviderOverrides } from "../../cli/provider_settings.ts";
import { modelChoices, switchModel } from "../../cli/acp/model_options.ts";
import { configOptions, setConfigOption } from "../../cli/acp/config_options.ts";
import { approvalOfMode, modeState } from "../../cli/acp/modes.ts";
import { tempDir } from "../_helpers.ts";

// Only OpenAI's key is set.
const env = (name: string) => name === "OPENAI_API_KEY" ? "sk-test-key-1234" : undefined;

async function openSession(
  dir: string,
  overrides: ProviderOverrides,
  config = "",
): Promise<AgentSession & AsyncDisposable> {
  await Deno.writeTextFile(`${dir}/config.yaml`, config);
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, configDir: dir, workspace: dir, thirdParty: false }),
    overrides,
    env,
  });
  return Object.assign(session, {
    async [Symbol.asyncDispose]() {
      session.close();
      await session.host.close();
    },
  });
}

// A session on an OpenAI-compatible service at another base URL, whose `local-big` config.yaml
// describes.
function localSession(dir: string): Promise<AgentSession & AsyncDisposable> {
  return openSession(
    dir,
    { provider: "openai", model: "my-model", baseUrl: "http://127.0.0.1:9/v1" },
    "models:\n  local-big:\n    contextWindow: 131072\n",
  );
}

function values(choices: readonly { value: string }[]): string[] {
  return choices.map((choice) => choice.value);
}

Deno.test("modelChoices: the provider's catalog that can call tools, and usable presets' defaults", async () => {
  await using tmp = await tempDir();
  await using session = await openSession(tmp.dir, { provider: "openai" });
  const choices = await modelChoices(session, env);
  const offered = values(choices);
  assert.ok(offered.includes(`openai/${session.model}`), "the model in use");
  const catalog = await modelCatalog({ name: "openai", catalog: "openai" });
  const toolless = catalog.filter((info) => info.abilities?.tools === false);
  assert.ok(toolless.length > 0, "the snapshot has models without tools");
  for (const info of toolless) assert.ok(!offered.includes(`openai/${info.id}`), info.id);
  const described = choices.find((choice) => choice.value === `openai/${session.model}`);
  assert.match(described?.description ?? "", /token window|per M tokens/);
  // ollama needs no key; anthropic's is not set.
  assert.ok(offered.some((value) => value.startsWith("ollama/")));
  assert.ok(!offered.some((value) => value.startsWith("anthropic/")));
  assert.equal(new Set(offered).size, offered.length, "each once");
});

Deno.test("modelChoices: at another base URL, config.yaml's models and the one in use", async () => {
  await using tmp = await tempDir();
  await using session = await localSession(tmp.dir);
  const offered = values(await modelChoices(session, env)).filter((value) =>
    value.startsWith("openai/")
  );
  assert.deepEqual(offered.sort(), ["openai/local-big", "openai/my-model"]);
});

Deno.test("switchModel: within the provider, to another preset, and a value that is none", async () => {
  await using tmp = await tempDir();
  await using session = await localSession(tmp.dir);
  const choices = await modelChoices(session, env);
  switchModel(session, "openai/local-big", choices);
  assert.equal(session.model, "local-big");
  assert.equal(session.overrides.baseUrl, "http://127.0.0.1:9/v1", "the same service");
  const ollama = choices.find((choice) => choice.value.startsWith("ollama/"))!.value;
  switchModel(session, ollama, choices);
  assert.equal(`${session.provider}/${session.model}`, ollama);
  assert.equal(session.problem, undefined);
  assert.throws(
    () => switchModel(session, "openai/gpt-nonexistent", choices),
    (error: unknown) =>
      error instanceof RequestError && error.code === -32602 &&
      /unknown model 'openai\/gpt-nonexistent'/.test(error.message),
  );
  assert.equal(`${session.provider}/${session.model}`, ollama, "unchanged");
});

Deno.test("configOptions and setConfigOption: mode and model, each set and reported", async () => {
  await using tmp = await tempDir();
  await using session = await localSession(tmp.dir);
  const current = (options: Awaited<ReturnType<typeof configOptions>>) =>
    options.map((option) => [option.id, option.currentValue]);
  assert.deepEqual(current(await configOptions(session, env)), [
    ["mode", "ask"],
    ["model", "openai/my-model"],
  ]);
  const moded = await setConfigOption(
    session,
    { sessionId: "s", configId: "mode", value: "deny" },
    env,
  );
  assert.equal(moded.mode, "deny");
  assert.equal(session.approval, "deny");
  const modelled = await setConfigOption(
    session,
    { sessionId: "s", configId: "model", value: "openai/local-big" },
    env,
  );
  assert.equal(modelled.mode, undefined);
  assert.deepEqual(current(modelled.configOptions), [
    ["mode", "deny"],
    ["model", "openai/local-big"],
  ]);
  await assert.rejects(
    setConfigOption(session, { sessionId: "s", configId: "effort", value: "high" }, env),
    /unknown config option 'effort'; options: mode, model/,
  );
  await assert.rejects(
    setConfigOption(session, { sessionId: "s", configId: "model", type: "boolean", value: true }),
    /config option 'model' takes one of its values, not true/,
  );
  await assert.rejects(
    setConfigOption(session, { sessionId: "s", configId: "mode", value: "maybe" }, env),
    /unknown mode 'maybe'/,
  );
  assert.equal(session.approval, "deny");
});

Deno.test("modes: one per approval policy; an id that is none is invalid params", () => {
  assert.deepEqual(modeState("ask").availableModes.map((mode) => [mode.id, mode.name]), [
    ["ask", "Ask"],
    ["auto", "Auto"],
    ["deny", "Read-only"],
  ]);
  assert.equal(approvalOfMode("auto"), "auto");
  assert.throws(
    () => approvalOfMode("constructor"),
    (error: unknown) => error instanceof RequestError && error.code === -32602,
  );
});
