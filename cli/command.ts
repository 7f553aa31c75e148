/**
 * What a subcommand of `amber` is: a name, its help lines, the options it takes, and a run
 * function over a context that opens the host only when the command needs it.
 *
 * @module
 */

import type { Plugin } from "@amber/core";
import type { ParsedArgs } from "./args.ts";
import type { Host, HostOptions } from "./host.ts";

/** What a command may add to the host it opens. */
export type HostExtras = Pick<
  HostOptions,
  "subagents" | "signal" | "ui" | "frontEnd" | "onDiagnostic" | "mcp"
>;
import type { ProviderOverrides } from "./provider_settings.ts";

/** Where the CLI writes. */
export interface Io {
  /** Standard output, one line (or block) at a time. */
  out(text: string): void;
  /** Standard error. */
  err(text: string): void;
  /** Standard output without a newline: streamed answer text. */
  write?(text: string): void;
}

/** What a command runs with. */
export interface CommandContext {
  /** The words after the command's name. */
  readonly words: readonly string[];
  /** Every parsed option. */
  readonly parsed: ParsedArgs;
  /** Where to write. */
  readonly io: Io;
  /** The plugins of this harness. */
  readonly plugins: () => readonly Plugin[];
  /**
   * The host, started on first use with `extras` (the first call's win); `main` closes it.
   */
  host(extras?: HostExtras): Promise<Host>;
  /** `--provider`, `--model`, `--base-url`. */
  readonly overrides: ProviderOverrides;
  /** `--width`, else the terminal's. */
  readonly width: number;
  /** The config directory given with `--config-dir`, if any. */
  readonly configDir?: string;
  /** The workspace: `--workspace`, else where amber was started. */
  readonly workspace: string;
}

/** One subcommand. */
export interface CliCommand {
  /** The word that selects it. */
  readonly name: string;
  /** Its lines of the help text. */
  readonly usage: string;
  /** Options that take a value, without dashes. */
  readonly options?: readonly string[];
  /** Options without a value. */
  readonly flags?: readonly string[];
  /** Runs it; resolves to the exit code. */
  run(context: CommandContext): Promise<number>;
}
