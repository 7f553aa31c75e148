/**
 * `amber serve`: amber's sessions over HTTP for editors and programs. It listens on 127.0.0.1
 * (another address only when `--host` names it, with a warning), prints its URL and, unless
 * `AMBER_SERVE_TOKEN` gave it, the bearer token it generated, and serves until Ctrl-C or
 * SIGTERM, which close every session (cancelling running turns) before it exits.
 *
 * @module
 */

import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { isMcpLog } from "../mcp_logs.ts";
import { plainText } from "../plain_text.ts";
import { startServer } from "../serve/server.ts";

// The addresses only this machine reaches.
const isLoopback = (hostname: string) =>
  hostname === "localhost" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname);

/** `amber serve`. */
export const serveCommand: CliCommand = {
  name: "serve",
  usage: `  serve                           amber's sessions over HTTP (bearer token from
      [--port N] [--host ADDR]    AMBER_SERVE_TOKEN, else generated and printed); 127.0.0.1
                                  by default, port 0 picks a free one; --provider, --model
                                  and --base-url are the sessions' defaults`,
  options: ["port", "host"],
  run,
};

async function run(context: CommandContext): Promise<number> {
  const { io, parsed } = context;
  if (context.words.length > 0) throw new UsageError("usage: amber serve [--port N] [--host ADDR]");
  const rawPort = parsed.options.get("port") ?? "0";
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got '${rawPort}'`);
  }
  const hostname = parsed.options.get("host") ?? "127.0.0.1";
  if (!isLoopback(hostname)) {
    io.err(
      `amber: warning: serving on ${hostname}, not loopback: anyone who can reach it and has ` +
        "the token can run tools in your workspaces",
    );
  }
  const given = Deno.env.get("AMBER_SERVE_TOKEN") ?? "";
  const token = given !== "" ? given : generateToken();
  const server = await startServer({
    hostname,
    port,
    token,
    plugins: context.plugins,
    defaults: context.overrides,
    // What an MCP server logs is for `amber doctor`, not the server's output.
    onDiagnostic: (d) => {
      if (isMcpLog(d)) return;
      io.err(plainText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`));
    },
    ...(context.configDir === undefined ? {} : { configDir: context.configDir }),
  });
  io.out(`amber: serving on ${server.url}`);
  io.out(given !== "" ? "amber: token from AMBER_SERVE_TOKEN" : `amber: token ${token}`);
  const { promise: stopped, resolve } = Promise.withResolvers<number>();
  const signals = ([["SIGINT", 130], ["SIGTERM", 143]] as const).flatMap(([signal, code]) => {
    const handler = () => resolve(code);
    try {
      Deno.addSignalListener(signal, handler);
      return [[signal, handler] as const];
    } catch {
      // Not a signal this system offers.
      return [];
    }
  });
  const code = await stopped;
  for (const [signal, handler] of signals) Deno.removeSignalListener(signal, handler);
  io.err("amber: closing the sessions");
  await server.close();
  return code === 130 ? 0 : code;
}

// 32 random bytes: a token nobody guesses.
function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
