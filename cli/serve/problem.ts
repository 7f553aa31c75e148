/**
 * The errors of `amber serve` as RFC 9457 problem details (`application/problem+json`): what
 * went wrong, the HTTP status, and the request's field at fault when there is one, so that a
 * client can point at it.
 *
 * @module
 */

/** The body of a problem response. */
export interface Problem {
  /** A URI naming the kind of problem; `about:blank` when the status says it all. */
  readonly type: string;
  /** The status's short words. */
  readonly title: string;
  /** The HTTP status. */
  readonly status: number;
  /** What went wrong this time. */
  readonly detail?: string;
  /** The request's field at fault (`workspace`, `plugins.enable[0]`, `answer`). */
  readonly field?: string;
}

const TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/**
 * A request the server refuses, with the status and (when one is at fault) the field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProblemError } from "./problem.ts";
 * const error = new ProblemError(400, "workspace must be a string", "workspace");
 * assert.equal(error.name, "ProblemError");
 * assert.deepEqual(error.problem(), {
 *   type: "about:blank",
 *   title: "Bad Request",
 *   status: 400,
 *   detail: "workspace must be a string",
 *   field: "workspace",
 * });
 * ```
 */
export class ProblemError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The request's field at fault, if any. */
  readonly field?: string;

  /** A refusal with `status`, saying `detail`, naming `field`. */
  constructor(status: number, detail: string, field?: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = "ProblemError";
    this.status = status;
    if (field !== undefined) this.field = field;
  }

  /** The problem details of this refusal. */
  problem(): Problem {
    return {
      type: "about:blank",
      title: TITLES[this.status] ?? "Error",
      status: this.status,
      detail: this.message,
      ...(this.field === undefined ? {} : { field: this.field }),
    };
  }
}

/**
 * The `application/problem+json` response of `error`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProblemError, problemResponse } from "./problem.ts";
 * const response = problemResponse(new ProblemError(404, "no session 'x'", "id"));
 * assert.equal(response.status, 404);
 * assert.equal(response.headers.get("content-type"), "application/problem+json");
 * assert.equal((await response.json()).field, "id");
 * ```
 */
export function problemResponse(error: ProblemError, headers: HeadersInit = {}): Response {
  const response = new Response(JSON.stringify(error.problem()), {
    status: error.status,
    headers,
  });
  response.headers.set("content-type", "application/problem+json");
  return response;
}
