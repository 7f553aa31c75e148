// What a sandboxed plugin asks of the user, answered by the host's UI: the plugin process sends
// `ui.ask` (its `services.host.ui` forwards each question), and the answer crosses back, `null`
// for none. Without a UI the question is refused as a headless host refuses it.

import { type UiService, UiUnavailableError } from "../ui.ts";
import type { UiAskParams } from "./protocol.ts";

/** Puts `params`'s question to `ui`; `signal` withdraws it (the plugin cancelled its request). */
export async function answerQuestion(
  ui: UiService | undefined,
  params: UiAskParams,
  signal: AbortSignal,
): Promise<unknown> {
  const question = String(params?.question);
  const kind = String(params?.kind);
  if (ui === undefined) throw new UiUnavailableError(kind, question);
  const options = { signal };
  let answer: unknown;
  switch (params.kind) {
    case "text":
      answer = await ui.askText(question, {
        ...options,
        ...(typeof params.initial === "string" ? { initial: params.initial } : {}),
      });
      break;
    case "secret":
      answer = await ui.askSecret(question, options);
      break;
    case "choose":
      answer = await ui.choose(question, (params.choices ?? []).map(String), options);
      break;
    case "confirm":
      answer = await ui.confirm(question, options);
      break;
    default:
      throw new TypeError(`no question of kind ${JSON.stringify(kind)}`);
  }
  return answer ?? null;
}
