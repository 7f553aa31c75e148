// The roots amber gives a server (MCP `roots/list`): the workspace, and nothing else.

import { pathToFileURL } from "node:url";
import { basename } from "node:path";

/** The workspace as the one root a server may work in. */
export function workspaceRoots(workspace: string): { uri: string; name: string }[] {
  return [{ uri: pathToFileURL(workspace).href, name: basename(workspace) }];
}
