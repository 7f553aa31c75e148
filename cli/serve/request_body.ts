/**
 * Reading a request's JSON body for `amber serve`: at most a size limit (413 beyond it), an
 * object, and its fields checked one by one, each refusal naming the field.
 *
 * @module
 */

import { ProblemError } from "./problem.ts";

/** The largest request body `amber serve` reads, in bytes, by default. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * The request's body as a JSON object, read up to `limit` bytes: a larger one is a 413 (said by
 * its Content-Length or found while reading), a body that is not a JSON object a 400.
 */
export async function readJsonObject(
  request: Request,
  limit: number = DEFAULT_BODY_LIMIT,
): Promise<Record<string, unknown>> {
  const tooLarge = () => new ProblemError(413, `the request body is larger than ${limit} bytes`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    for await (const chunk of request.body) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new ProblemError(400, "the request body is not JSON", undefined, { cause: error });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProblemError(400, "the request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/**
 * `body[field]` as a string: required unless `optional` (then absent is `undefined`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stringField } from "./request_body.ts";
 * assert.equal(stringField({ text: "hi" }, "text"), "hi");
 * assert.throws(() => stringField({ text: 1 }, "text"), { field: "text", status: 400 });
 * assert.throws(() => stringField({}, "text"), { message: "text is required" });
 * assert.equal(stringField({}, "model", true), undefined);
 * ```
 */
export function stringField(
  body: Record<string, unknown>,
  field: string,
  optional = false,
): string | undefined {
  const value = body[field];
  if (value === undefined && optional) return undefined;
  if (value === undefined) throw new ProblemError(400, `${field} is required`, field);
  if (typeof value !== "string") throw new ProblemError(400, `${field} must be a string`, field);
  return value;
}

/**
 * `body[field]` as one of `choices`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { choiceField } from "./request_body.ts";
 * assert.equal(choiceField({ answer: "once" }, "answer", ["once", "deny"]), "once");
 * assert.throws(() => choiceField({ answer: "yes" }, "answer", ["once", "deny"]), {
 *   field: "answer",
 * });
 * ```
 */
export function choiceField<T extends string>(
  body: Record<string, unknown>,
  field: string,
  choices: readonly T[],
  optional = false,
): T | undefined {
  const value = body[field];
  if (value === undefined && optional) return undefined;
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
    throw new ProblemError(400, `${field} must be one of ${choices.join(", ")}`, field);
  }
  return value as T;
}

/** `body[field]` as an array of strings (absent: empty), each refusal naming `field[i]`. */
export function stringsField(
  body: Record<string, unknown>,
  field: string,
  path: string = field,
): string[] {
  const value = body[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ProblemError(400, `${path} must be an array`, path);
  return value.map((item, index) => {
    if (typeof item !== "string") {
      throw new ProblemError(400, `${path}[${index}] must be a string`, `${path}[${index}]`);
    }
    return item;
  });
}
