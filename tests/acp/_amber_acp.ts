// What the end-to-end tests of `amber acp` share: amber as an editor runs it, a real subprocess
// on stdio joined to the editor's side of the connection (a client built from the ACP package),
// and a bound on every wait, so a turn that ignores a cancel fails a test instead of hanging it.

import assert from "node:assert/strict";
import { type ClientApp, type ClientConnection, ndJsonStream } from "@agentclientprotocol/sdk";
import { MAIN, PERMISSIONS } from "../cli/_subprocess.ts";

/** The provider key amber is given (the fake provider takes any). */
export const TEST_KEY = "sk-test-key-1234";

/** Where and against what `amber acp` runs. */
export interface AmberAcpOptions {
  readonly configDir: string;
  readonly workspace: string;
  /** The fake provider's OpenAI-compatible base URL. */
  readonly baseUrl: string;
  /** More arguments of `amber acp`. */
  readonly args?: readonly string[];
  /** More environment variables (`HOME`, for a `~/.claude` of the test's own). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A running `amber acp`; disposing it closes its stdin and checks that it ended cleanly. */
export interface AmberAcp extends AsyncDisposable {
  readonly agent: ClientConnection["agent"];
}

/** Starts `amber acp` with `editor` on the other end of its stdio. */
export function startAmberAcp(editor: ClientApp, options: AmberAcpOptions): AmberAcp {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...PERMISSIONS,
      MAIN,
      "acp",
      "--base-url",
      options.baseUrl,
      ...options.args ?? [],
    ],
    env: {
      AMBER_CONFIG_DIR: options.configDir,
      INIT_CWD: options.workspace,
      NO_COLOR: "1",
      OPENAI_API_KEY: TEST_KEY,
      ...options.env,
    },
    cwd: options.workspace,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const connection = editor.connect(ndJsonStream(child.stdin, child.stdout));
  return {
    agent: connection.agent,
    async [Symbol.asyncDispose]() {
      connection.close();
      await child.stdin.close().catch(() => {});
      assert.equal((await child.status).code, 0, "amber acp ends cleanly when stdin closes");
    },
  };
}

/** `promise`, or a failure once `ms` passed. */
export async function within<T>(promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
