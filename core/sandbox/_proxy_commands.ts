// A sandboxed plugin's command capability: the tree is data from its descriptor, and each path
// that has a handler in the plugin gets one here that runs it there (`command.run`). A failure
// is thrown, as a failing handler throws, and the command registry turns it into an error.

import type { CommandCapability, CommandHandler } from "../command.ts";
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
      const text = await link.call(Method.commandRun, params, "command", what);
      if (typeof text !== "string") {
        throw new TypeError(`${what} answered ${typeof text}, not text`);
      }
      return text;
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
