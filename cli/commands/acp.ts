/**
 * `amber acp`: amber as an Agent Client Protocol agent over stdio, for editors (Zed and others)
 * that start it as a subprocess. stdout carries only the protocol; amber's own diagnostics go to
 * stderr. Each session the editor opens works in the workspace the editor names, with the
 * provider and approval options given here, as `amber run` takes them. When the editor offers its
 * file system and terminals, the file tools read and write through it (unsaved buffers
 * included) and bash runs in its terminal (see `../acp/editor.ts`); otherwise amber's own run.
 *
 * @module
 */

import type { ApprovalPolicy } from "@amber/core";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { intOption, UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { openHost } from "../host.ts";
import { isMcpLog } from "../mcp_logs.ts";
import { AgentSession, HeldDiagnostics } from "../session/mod.ts";
import { plainText } from "../plain_text.ts";
import { VERSION } from "../version.ts";
import { createAcpAgent } from "../acp/agent.ts";

const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/** `amber acp`. */
export const acpCommand: CliCommand = {
  name: "acp",
  usage: `  acp                             an Agent Client Protocol agent on stdio, for editors
      [--approve ask|auto|deny]   tools that need approval: ask the editor (default), allow,
                                  or refuse
      [--max-steps N]             at most N model calls per prompt (default 50)`,
  options: ["provider", "model", "base-url", "approve", "max-steps"],
  run,
};

async function run(context: CommandContext): Promise<number> {
  const { io, parsed } = context;
  const approve = (parsed.options.get("approve") ?? "ask") as ApprovalPolicy;
  if (!APPROVALS.includes(approve)) {
    throw new UsageError(`--approve must be one of ${APPROVALS.join(", ")}, got '${approve}'`);
  }
  const maxSteps = intOption(parsed, "max-steps", 50);
  const acp = createAcpAgent({
    version: VERSION,
    openSession: async (cwd, editor) => {
      const diagnostics = new HeldDiagnostics((d) => {
        if (isMcpLog(d)) return;
        io.err(plainText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`));
      });
      try {
        const session = await AgentSession.open({
          openHost: (services) =>
            openHost({
              ...services,
              plugins: context.plugins(),
              configDir: context.configDir,
              workspace: cwd,
              onDiagnostic: diagnostics.receive,
              mcp: { connect: true },
              ...(editor === undefined ? {} : { editor }),
            }),
          overrides: context.overrides,
          approval: approve,
          maxSteps,
        });
        diagnostics.release((text) => session.redact(text));
        return session;
      } catch (error) {
        diagnostics.release();
        throw error;
      }
    },
  });
  const connection = acp.app.connect(ndJsonStream(Deno.stdout.writable, Deno.stdin.readable));
  try {
    await connection.closed;
  } finally {
    await acp.close();
  }
  return 0;
}
