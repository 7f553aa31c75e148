/**
 * One line of a batch's tasks file (JSON Lines): what one queued session runs. A line names its
 * workspace (a local `workspace` path, or a git `repo` with an optional `ref` that the worker
 * clones into a fresh folder), the `prompt`, and optionally the provider, model, base URL,
 * plugin selection and limits. Keys are checked strictly: an unknown key, a wrong type, both or
 * neither of `workspace` and `repo`, an empty prompt or a line that is not JSON is an error
 * naming the file, the line and the key, and the other lines go on.
 *
 * A spec carries no secrets: there is no key for one, and the worker takes provider keys from
 * its own environment.
 *
 * @module
 */

/** What one job runs: a validated line of a tasks file. */
export interface JobSpec {
  /**
   * A local workspace path; `amber batch submit` makes a relative one absolute against the
   * tasks file's folder, and a worker resolves any still relative against its own directory.
   */
  readonly workspace?: string;
  /** A git URL (or path) the worker clones into a fresh folder. */
  readonly repo?: string;
  /** The branch, tag or commit of `repo` to check out; the default branch when absent. */
  readonly ref?: string;
  /** The prompt of the session's one turn. */
  readonly prompt: string;
  /** The provider preset (or config.yaml provider); the worker's configured one when absent. */
  readonly provider?: string;
  /** The model; the provider's configured or default one when absent. */
  readonly model?: string;
  /** The API's base URL; the provider's when absent. */
  readonly baseUrl?: string;
  /** The ids of the plugins to turn on; the worker's configuration when absent. */
  readonly plugins?: readonly string[];
  /** At most this many model calls. */
  readonly maxSteps?: number;
  /** The session is cancelled (and commits what it did) after this many seconds. */
  readonly timeoutS?: number;
  /** The session stops once its cost passes this many dollars. */
  readonly maxCost?: number;
}

/** A valid line of a tasks file and where it was. */
export interface ParsedTask {
  /** The 1-based line number in the file. */
  readonly line: number;
  /** What the line asks for. */
  readonly spec: JobSpec;
}

/** What is wrong with one line of a tasks file. */
export interface TaskLineError {
  /** The file, as the user named it. */
  readonly file: string;
  /** The 1-based line number. */
  readonly line: number;
  /** The key at fault, when one is. */
  readonly key?: string;
  /** What is wrong, without the file and line. */
  readonly problem: string;
  /** `file:line: problem`, for the terminal. */
  readonly message: string;
}

/** Everything a tasks file holds: the valid lines and what is wrong with the others. */
export interface ParsedTasks {
  /** The valid lines, in file order. */
  readonly tasks: readonly ParsedTask[];
  /** One entry per bad line (the first problem of each), in file order. */
  readonly errors: readonly TaskLineError[];
}

/** A job spec that breaks a rule; `key` names the key at fault, when one is. */
export class JobSpecError extends Error {
  /** The key at fault, if any. */
  readonly key?: string;

  /** An error saying `message`, about `key` when given. */
  constructor(message: string, key?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "JobSpecError";
    if (key !== undefined) this.key = key;
  }
}

type Kind = "string" | "number" | "strings";

// Each key and what its value must be; the order is the one the messages list them in.
const KEYS: Readonly<Record<keyof JobSpec, Kind>> = {
  workspace: "string",
  repo: "string",
  ref: "string",
  prompt: "string",
  provider: "string",
  model: "string",
  baseUrl: "string",
  plugins: "strings",
  maxSteps: "number",
  timeoutS: "number",
  maxCost: "number",
};

/** The keys a line of a tasks file may have. */
export const JOB_SPEC_KEYS: readonly (keyof JobSpec)[] = Object.keys(KEYS) as (keyof JobSpec)[];

// A provider name becomes a queue's name, so it keeps to characters every Redis key tolerates.
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

function checkKind(key: string, kind: Kind, value: unknown): void {
  if (kind === "string" && typeof value !== "string") {
    throw new JobSpecError(`'${key}' must be a string, got ${describe(value)}`, key);
  }
  if (kind === "number" && (typeof value !== "number" || !Number.isFinite(value))) {
    throw new JobSpecError(`'${key}' must be a number, got ${describe(value)}`, key);
  }
  if (kind === "strings") {
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item === "")) {
      throw new JobSpecError(
        `'${key}' must be an array of plugin ids (non-empty strings), got ${describe(value)}`,
        key,
      );
    }
  }
}

/**
 * Checks one parsed line (or a job's payload, which a worker checks again) and returns it as a
 * {@linkcode JobSpec}; throws a {@linkcode JobSpecError} naming the first key at fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { JobSpecError, validateJobSpec } from "./job_spec.ts";
 * const spec = validateJobSpec({ workspace: "/src/app", prompt: "Fix the tests.", maxSteps: 20 });
 * assert.equal(spec.maxSteps, 20);
 * assert.throws(() => validateJobSpec({ repo: "x", prompt: "hi", maxCosts: 1 }), JobSpecError);
 * ```
 */
export function validateJobSpec(value: unknown): JobSpec {
  if (!isRecord(value)) {
    throw new JobSpecError(`a task must be a JSON object, got ${describe(value)}`);
  }
  for (const [key, item] of Object.entries(value)) {
    const kind = (KEYS as Record<string, Kind>)[key];
    if (kind === undefined) {
      throw new JobSpecError(
        `unknown key '${key}'; the keys are ${JOB_SPEC_KEYS.join(", ")}`,
        key,
      );
    }
    checkKind(key, kind, item);
  }
  const hasWorkspace = value.workspace !== undefined;
  const hasRepo = value.repo !== undefined;
  if (hasWorkspace && hasRepo) {
    throw new JobSpecError("give 'workspace' or 'repo', not both", "repo");
  }
  if (!hasWorkspace && !hasRepo) {
    throw new JobSpecError("a task needs 'workspace' (a local path) or 'repo' (a git URL)");
  }
  if (value.ref !== undefined && !hasRepo) {
    throw new JobSpecError("'ref' needs 'repo' (a workspace is used as it is)", "ref");
  }
  for (const key of ["workspace", "repo", "ref", "model", "baseUrl"] as const) {
    if (value[key] === "") throw new JobSpecError(`'${key}' is empty`, key);
  }
  if (value.prompt === undefined) throw new JobSpecError("'prompt' is missing", "prompt");
  if ((value.prompt as string).trim() === "") {
    throw new JobSpecError("'prompt' is empty", "prompt");
  }
  if (value.provider !== undefined && !PROVIDER_NAME.test(value.provider as string)) {
    throw new JobSpecError(
      `'provider' must be a provider name (letters, digits, '.', '_', '-'), got ` +
        JSON.stringify(value.provider),
      "provider",
    );
  }
  const maxSteps = value.maxSteps as number | undefined;
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || maxSteps < 1)) {
    throw new JobSpecError(
      `'maxSteps' must be a whole number of 1 or more, got ${maxSteps}`,
      "maxSteps",
    );
  }
  for (const key of ["timeoutS", "maxCost"] as const) {
    const limit = value[key] as number | undefined;
    if (limit !== undefined && limit <= 0) {
      throw new JobSpecError(`'${key}' must be more than 0, got ${limit}`, key);
    }
  }
  return value as unknown as JobSpec;
}

/**
 * Parses a tasks file: one JSON object per line; blank lines are skipped. Every line is checked
 * on its own, so a bad line is reported (file, line number, key, problem) and the others are
 * still returned.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTasks } from "./job_spec.ts";
 * const text = [
 *   '{"workspace": "/src/a", "prompt": "Add a README."}',
 *   '{"workspace": "/src/b", "prompt": "Fix it.", "colour": "red"}',
 *   "",
 *   '{"repo": "https://example.com/c.git", "ref": "main", "prompt": "Bump the version."}',
 * ].join("\n");
 * const { tasks, errors } = parseTasks(text, "tasks.jsonl");
 * assert.deepEqual(tasks.map((task) => task.line), [1, 4]);
 * assert.equal(errors[0].line, 2);
 * assert.equal(errors[0].key, "colour");
 * assert.match(errors[0].message, /^tasks\.jsonl:2: unknown key 'colour'/);
 * ```
 */
export function parseTasks(text: string, file: string): ParsedTasks {
  const tasks: ParsedTask[] = [];
  const errors: TaskLineError[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    // A file written on Windows ends its lines with CR LF.
    const source = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (source.trim() === "") continue;
    try {
      let value: unknown;
      try {
        value = JSON.parse(source);
      } catch (error) {
        throw new JobSpecError(`not JSON: ${(error as Error).message}`, undefined, {
          cause: error,
        });
      }
      tasks.push({ line, spec: validateJobSpec(value) });
    } catch (error) {
      if (!(error instanceof JobSpecError)) throw error;
      errors.push({
        file,
        line,
        ...(error.key === undefined ? {} : { key: error.key }),
        problem: error.message,
        message: `${file}:${line}: ${error.message}`,
      });
    }
  }
  return { tasks, errors };
}
