// A sandboxed plugin's command capability: the tree is data from its descriptor, and each path
// that has a handler in the plugin gets one here that runs it there (`command.run`). A failure
// is thrown, as a failing handler throws, and the command registry turns it into an error. The
// answer is the handler's text or its reply (a prompt for the model), checked here again: the
// process is not trusted to have checked it.

import {
  type CommandCapability,
  type CommandHandler,
  type CommandReply,
  commandReplyProblem,
} from "../command.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import { type CapabilityDescriptor, type CommandRunParams, Method } from "./protocol.ts";

/** The host's command capability for a `command` descriptor. */
export function proxyCommand(
  descriptor: Extract<CapabilityDescriptor, { readonly kind: "command" }>,
  link: ProxyLink,
): CommandCapability {
  const { name, root, help, man, subtree } = descriptor;
  const handlers: { [path: string]: CommandHandler } = {};
  for (const path of descriptor.handlers) {
    const what = `command '/${[root, ...(path === "" ? [] : path.split("."))].join(" ")}' ` +
      `of plugin '${link.pluginId}'`;
    handlers[path] = async (arg) => {
      const params: CommandRunParams = { name, path, arg };
      const reply = await link.call(Method.commandRun, params, "command", what);
      const problem = commandReplyProblem(reply);
      if (problem !== undefined) throw new TypeError(`${what} ${problem}`);
      if (typeof reply === "string") return reply;
      // Only the two fields cross: whatever else the process put in the object stays out.
      const { text, prompt } = reply as CommandReply;
      return {
        ...(text === undefined ? {} : { text }),
        ...(prompt === undefined ? {} : { prompt }),
      };
    };
  }
  return {
    kind: "command",
    name,
    root,
    help,
    ...(man === undefined ? {} : { man }),
    subtree,
    handlers,
  };
}
