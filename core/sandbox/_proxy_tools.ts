// A sandboxed plugin's tool capability: each tool's data comes from its descriptor, and its
// calls cross to the plugin process (`tool.execute` with the model call's id,
// `tool.requiresApproval`). The kernel's cancel signal crosses as `$/cancelRequest`; the tool's
// progress and its streamed output come back as `$/progress` values (output tagged, and
// forwarded only up to a budget per call). Whatever goes wrong on the way is an error result, as
// a tool's failure is.

import { describeError } from "../errors.ts";
import { isToolResult, type Tool, type ToolCallContext, type ToolResult } from "../tool.ts";
import type { ToolCapability } from "../tool_capability.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import { OutputBudget } from "../_output_budget.ts";
import { isOutputProgress } from "./_tool_output.ts";
import {
  type CapabilityDescriptor,
  Method,
  type ToolApprovalParams,
  type ToolDescriptor,
  type ToolExecuteParams,
} from "./protocol.ts";

/** The host's tool capability for a `tool` descriptor. */
export function proxyTools(
  descriptor: Extract<CapabilityDescriptor, { readonly kind: "tool" }>,
  link: ProxyLink,
): ToolCapability {
  const tools = descriptor.tools.map((tool) => proxyTool(descriptor.name, tool, link));
  return { kind: "tool", name: descriptor.name, tools };
}

function proxyTool(capability: string, descriptor: ToolDescriptor, link: ProxyLink): Tool {
  const name = descriptor.name;
  const what = `tool '${name}' of plugin '${link.pluginId}'`;
  const tool: { -readonly [K in keyof Tool]: Tool[K] } = {
    name,
    description: descriptor.description,
    parameters: descriptor.parameters,
    execute: async (args: unknown, context: ToolCallContext): Promise<ToolResult> => {
      const params: ToolExecuteParams = {
        capability,
        tool: name,
        args,
        ...(context.callId === undefined ? {} : { callId: context.callId }),
      };
      const progress = context.progress;
      const stream = context.output;
      const output = stream === undefined ? undefined : new OutputBudget(stream, what);
      const onProgress = (value: unknown): void => {
        if (isOutputProgress(value)) output?.take(value.output);
        else progress?.(String(value));
      };
      let result: unknown;
      try {
        result = await link.call(Method.toolExecute, params, "tool", what, {
          signal: context.signal,
          ...(progress === undefined && output === undefined ? {} : { onProgress }),
          withGrace: true,
        });
      } catch (error) {
        return { ok: false, output: "", error: `${what} failed: ${describeError(error)}` };
      }
      return isToolResult(result)
        ? result
        : { ok: false, output: "", error: `${what} answered something other than a tool result` };
    },
  };
  if (descriptor.verb !== undefined) tool.verb = descriptor.verb;
  if (descriptor.readOnly !== undefined) tool.readOnly = descriptor.readOnly;
  if (descriptor.asksApproval) {
    // Fail closed: any answer but `false` (a rejection included) asks the user.
    tool.requiresApproval = async (args) => {
      const params: ToolApprovalParams = { capability, tool: name, args };
      const answer = await link.call(Method.toolRequiresApproval, params, "gate", what);
      return answer !== false;
    };
  }
  return tool;
}
