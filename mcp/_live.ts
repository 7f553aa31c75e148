// Everything a server's plugin needs once it connects, and only then: each of these loads the MCP
// SDK (about 200 ms of module evaluation, zod and ajv included). The plugin shell, the manager and
// the configuration load without it, so registering servers (and `amber plugins list`) costs no
// SDK, and a session draws its first frame before the SDK loads.

export { connectServer } from "./connect.ts";
export { mcpPromptCommands } from "./prompt_commands.ts";
export { mcpAttachmentHook, mcpResourceTools } from "./resources.ts";
export { mcpTool } from "./tool_mapping.ts";
export {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
