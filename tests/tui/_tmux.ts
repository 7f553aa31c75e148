// `amber` in a real terminal for end-to-end tests: a tmux server of its own (its own socket)
// runs amber in one window; the test types with send-keys and reads the screen with
// capture-pane, polling until what it expects appears (every wait has a generous deadline and
// says what it waited for). Disposing it kills the tmux server and what runs in it.

import { MAIN, TASK_FLAGS } from "../cli/_subprocess.ts";

// The terminal tests run amber with the task's flags as the CLI tests do; `--quiet` among them
// matters most here (see TASK_FLAGS).
export { TASK_FLAGS };

const STEP_MS = 20_000;

/** Whether tmux is installed (.ci/run installs it; a machine without it skips these tests). */
export function hasTmux(): boolean {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** A config directory and a workspace of a test's own, removed when it is disposed. */
export interface SessionDirs extends AsyncDisposable {
  readonly configDir: string;
  readonly workspace: string;
}

/** Makes {@linkcode SessionDirs} named after `prefix` (`amber-<prefix>-`, `amber-<prefix>-ws-`). */
export async function sessionDirs(prefix: string): Promise<SessionDirs> {
  const configDir = await Deno.makeTempDir({ prefix: `amber-${prefix}-` });
  const workspace = await Deno.makeTempDir({ prefix: `amber-${prefix}-ws-` });
  return {
    configDir,
    workspace,
    async [Symbol.asyncDispose]() {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    },
  };
}

/** Where {@linkcode startAmber} runs amber, and against what. */
export interface AmberInTmux {
  /** The OpenAI-style base URL of the (fake) provider, `/v1` included. */
  readonly baseUrl: string;
  /** amber's config directory. */
  readonly configDir: string;
  /** The workspace, also the working directory. */
  readonly workspace: string;
  /** The model; `fake-model` by default. */
  readonly model?: string;
  /** The window's width; 100 by default. */
  readonly columns?: number;
  /** The window's height; 30 by default. */
  readonly rows?: number;
  /** More arguments (`--resume ID`). */
  readonly args?: readonly string[];
}

/** The interactive session against a provider on loopback, with a test key and no colours. */
export function startAmber(options: AmberInTmux): Promise<Tmux> {
  return Tmux.start(
    [
      "--base-url",
      options.baseUrl,
      "--model",
      options.model ?? "fake-model",
      ...options.args ?? [],
    ],
    {
      AMBER_CONFIG_DIR: options.configDir,
      OPENAI_API_KEY: "sk-test-key-1234",
      NO_COLOR: "1",
      TERM: "xterm-256color",
      INIT_CWD: options.workspace,
    },
    options.workspace,
    { columns: options.columns ?? 100, rows: options.rows ?? 30 },
  );
}

// The screen with its runs of blank lines said in one line each, so that a failure's message keeps
// the prompt and the status bar at the bottom (a test runner cuts a long message short).
function compact(screen: string): string {
  return screen.trimEnd().replace(/(?:\n[ \t]*){3,}\n/g, (run) => {
    return `\n  (${run.split("\n").length - 2} blank lines)\n`;
  });
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** One tmux server running `amber ARGS` in a window of a given size. */
export class Tmux implements AsyncDisposable {
  readonly #socket = `amber-test-${crypto.randomUUID().slice(0, 8)}`;

  private constructor() {}

  /** Starts amber with `args` and `env` in `cwd`. */
  static async start(
    args: readonly string[],
    env: Readonly<Record<string, string>>,
    cwd: string,
    size: { readonly columns: number; readonly rows: number } = { columns: 100, rows: 30 },
  ): Promise<Tmux> {
    const tmux = new Tmux();
    const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`).join(" ");
    const flags = TASK_FLAGS.map(quote).join(" ");
    const command = `cd ${quote(cwd)} && env ${vars} ${quote(Deno.execPath())} run -A ${flags} ${
      quote(MAIN)
    } ${args.map(quote).join(" ")}; echo "amber exited $?"; sleep 600`;
    await tmux.#run(
      "new-session",
      "-d",
      "-s",
      "amber",
      "-x",
      String(size.columns),
      "-y",
      String(size.rows),
      command,
    );
    return tmux;
  }

  async #run(...args: string[]): Promise<string> {
    const output = await new Deno.Command("tmux", {
      args: ["-L", this.#socket, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    return new TextDecoder().decode(output.stdout);
  }

  /** The screen as text. */
  capture(): Promise<string> {
    return this.#run("capture-pane", "-p", "-t", "amber");
  }

  /**
   * The screen with up to `lines` lines of scrollback above it, as text, lines the terminal
   * wrapped joined again.
   */
  scrollback(lines: number = 200): Promise<string> {
    return this.#run("capture-pane", "-p", "-J", "-t", "amber", "-S", String(-lines));
  }

  /** The last non-empty line: the status bar. */
  async bar(): Promise<string> {
    return (await this.capture()).trimEnd().split("\n").at(-1) ?? "";
  }

  /** Makes the window `columns` wide. */
  async resize(columns: number): Promise<void> {
    await this.#run("resize-window", "-t", "amber", "-x", String(columns));
  }

  /** A pane variable: alternate_on, cursor_flag... */
  async variable(name: string): Promise<string> {
    return (await this.#run("display-message", "-p", "-t", "amber", `#{${name}}`)).trim();
  }

  /** Keys by tmux name: Enter, Escape, C-c. */
  async keys(...keys: string[]): Promise<void> {
    await this.#run("send-keys", "-t", "amber", ...keys);
  }

  /** Literal text. */
  async type(text: string): Promise<void> {
    await this.#run("send-keys", "-t", "amber", "-l", text);
  }

  /** Polls the screen until `test` holds; throws with the last screen after the deadline. */
  async waitFor(
    test: RegExp | ((screen: string) => boolean),
    what: string = String(test),
  ): Promise<string> {
    const check = typeof test === "function" ? test : (screen: string) => test.test(screen);
    const deadline = Date.now() + STEP_MS;
    let screen = "";
    while (Date.now() < deadline) {
      screen = await this.capture();
      if (check(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`waited ${STEP_MS / 1000} s for ${what}; the screen was:\n${compact(screen)}`);
  }

  /** Kills the tmux server and amber with it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#run("kill-server").catch(() => {});
  }
}
