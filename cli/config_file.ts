/**
 * Loads `config.yaml` from the config directory. The YAML parser is imported only when the file
 * exists, so a harness without one starts without paying for it.
 *
 * @module
 */

import type { AmberConfig, ApprovalPolicy } from "@amber/core";
import { join } from "node:path";

/** A `config.yaml` that cannot be used; names the file, and the line or field at fault. */
export class ConfigFileError extends Error {
  /** The file. */
  readonly path: string;
  /** Creates the error. */
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = "ConfigFileError";
    this.path = path;
  }
}

const STRING_FIELDS = ["provider", "model", "baseUrl", "apiKeyEnv"] as const;
const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/**
 * Reads `<dir>/config.yaml`. No file is the empty configuration; a file that does not parse or
 * has a field of the wrong type is a {@linkcode ConfigFileError}.
 *
 * @example
 * ```ts
 * import { loadConfigFile } from "@amber/cli/config";
 * const config = await loadConfigFile(await Deno.makeTempDir());
 * console.log(config); // { plugins: {} }
 * ```
 */
export async function loadConfigFile(dir: string): Promise<AmberConfig> {
  const path = join(dir, "config.yaml");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { plugins: {} };
    throw new ConfigFileError(path, `cannot read: ${(error as Error).message}`, { cause: error });
  }
  const { parseDocument } = await import("yaml");
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const where = first.linePos?.[0];
    throw new ConfigFileError(
      where ? `${path}:${where.line}:${where.col}` : path,
      first.message.split("\n")[0],
      { cause: first },
    );
  }
  const data: unknown = document.toJS() ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ConfigFileError(path, "expected a mapping at the top level");
  }
  const record = data as Record<string, unknown>;
  for (const field of STRING_FIELDS) {
    if (record[field] !== undefined && typeof record[field] !== "string") {
      throw new ConfigFileError(
        path,
        `${field}: expected a string, found ${typeOf(record[field])}`,
      );
    }
  }
  if (
    record.approval !== undefined && !APPROVALS.includes(record.approval as ApprovalPolicy)
  ) {
    throw new ConfigFileError(
      path,
      `approval: expected one of ${APPROVALS.join(", ")}, found ${JSON.stringify(record.approval)}`,
    );
  }
  const plugins = record.plugins ?? {};
  if (typeof plugins !== "object" || plugins === null || Array.isArray(plugins)) {
    throw new ConfigFileError(path, `plugins: expected a mapping, found ${typeOf(plugins)}`);
  }
  return { ...record, plugins } as AmberConfig;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `${typeof value} ${JSON.stringify(value)}`;
}
