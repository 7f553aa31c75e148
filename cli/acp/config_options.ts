/**
 * An ACP session's config options: `mode` (category `mode`: the approval policy, the same
 * values as the session modes) and `model` (category `model`: the provider and model, see
 * `model_options.ts`). The editor gets them in the `configOptions` of `session/new` and
 * `session/load`, sets one with `session/set_config_option` and gets the whole list back. A
 * model switched while a turn runs applies from the next prompt.
 *
 * @module
 */

import {
  RequestError,
  type SessionConfigOption,
  type SetSessionConfigOptionRequest,
} from "@agentclientprotocol/sdk";
import type { ApprovalPolicy } from "@amber/core";
import type { EnvReader } from "../provider_settings.ts";
import type { AgentSession } from "../session/mod.ts";
import { APPROVAL_MODES, approvalOfMode } from "./modes.ts";
import { currentModelValue, modelChoices, switchModel } from "./model_options.ts";

/** The id of the approval policy's option. */
export const MODE_OPTION = "mode";
/** The id of the model's option. */
export const MODEL_OPTION = "model";

/** What setting a config option changed, and the options as they stand after. */
export interface ConfigChange {
  /** Every option with its current value. */
  readonly configOptions: SessionConfigOption[];
  /** The approval policy switched to, when the `mode` option was set. */
  readonly mode?: ApprovalPolicy;
}

/**
 * The session's config options with their current values.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openHost } from "@amber/cli";
 * import { AgentSession } from "@amber/cli/session";
 * import { configOptions } from "./config_options.ts";
 * const configDir = await Deno.makeTempDir();
 * const session = await AgentSession.open({
 *   openHost: (services) => openHost({ ...services, configDir, workspace: configDir }),
 *   overrides: { provider: "ollama", model: "qwen3-coder" },
 *   approval: "deny",
 *   env: () => undefined,
 * });
 * const options = await configOptions(session, () => undefined);
 * assert.deepEqual(options.map((option) => [option.id, option.category, option.currentValue]), [
 *   ["mode", "mode", "deny"],
 *   ["model", "model", "ollama/qwen3-coder"],
 * ]);
 * session.close();
 * await session.host.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function configOptions(
  session: AgentSession,
  env?: EnvReader,
): Promise<SessionConfigOption[]> {
  return [
    {
      id: MODE_OPTION,
      name: "Mode",
      description: "What happens to a tool that needs approval",
      category: "mode",
      type: "select",
      currentValue: session.approval,
      options: APPROVAL_MODES.map(({ id, name, description }) => ({
        value: id,
        name,
        ...(description ? { description } : {}),
      })),
    },
    {
      id: MODEL_OPTION,
      name: "Model",
      description: "The provider and model of the next prompt",
      category: "model",
      type: "select",
      currentValue: currentModelValue(session),
      options: await modelChoices(session, env),
    },
  ];
}

/**
 * Sets the option `request` names on `session`; an unknown option or value, or a value of the
 * wrong type, is the editor's error, an invalid-params error naming it.
 */
export async function setConfigOption(
  session: AgentSession,
  request: SetSessionConfigOptionRequest,
  env?: EnvReader,
): Promise<ConfigChange> {
  const { configId, value } = request;
  if (configId !== MODE_OPTION && configId !== MODEL_OPTION) {
    throw RequestError.invalidParams(
      { configId },
      `unknown config option '${configId}'; options: ${MODE_OPTION}, ${MODEL_OPTION}`,
    );
  }
  if (typeof value !== "string") {
    throw RequestError.invalidParams(
      { configId, value },
      `config option '${configId}' takes one of its values, not ${JSON.stringify(value)}`,
    );
  }
  if (configId === MODE_OPTION) {
    const mode = approvalOfMode(value);
    session.setApproval(mode);
    return { configOptions: await configOptions(session, env), mode };
  }
  switchModel(session, value, await modelChoices(session, env));
  return { configOptions: await configOptions(session, env) };
}
