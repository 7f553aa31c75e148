/**
 * The loopback end of an OAuth authorization: a small HTTP server on 127.0.0.1 that the user's
 * browser is sent back to with the authorization code (RFC 8252's loopback redirect). It takes one
 * answer whose `state` is the one the authorization was started with, and tells the browser in a
 * short page whether it can be closed.
 *
 * @module
 */

/** What the authorization server sent back. */
export type CallbackAnswer =
  | { readonly code: string }
  | { readonly error: string; readonly description?: string };

const PATH = "/callback";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(status: number, title: string, text: string): Response {
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}` +
    `</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  return new Response(body, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}

interface Waiting {
  readonly state: string;
  readonly answer: Promise<CallbackAnswer>;
  readonly settle: (answer: CallbackAnswer) => void;
  settled: boolean;
}

/** A listening callback server. */
export class OAuthCallback {
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #label: string;
  #waiting: Waiting | undefined;

  private constructor(server: Deno.HttpServer<Deno.NetAddr>, label: string) {
    this.#server = server;
    this.#label = label;
  }

  /**
   * Listens on 127.0.0.1:`port` (a free port when `port` is 0). `label` names the server being
   * authorized on the pages the browser shows. Throws `Deno.errors.AddrInUse` for a taken port.
   */
  static listen(port: number, label: string): OAuthCallback {
    const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      // Requests arrive only once this returned, so `callback` is there by then.
      (request: Request): Response => callback.#answer(request),
    );
    const callback: OAuthCallback = new OAuthCallback(server, label);
    return callback;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#server.addr.port;
  }

  /** The redirect URL to register and to send with the authorization request. */
  get url(): string {
    return `http://127.0.0.1:${this.port}${PATH}`;
  }

  /** Whether an authorization was started and has not been answered yet or was answered. */
  get armed(): boolean {
    return this.#waiting !== undefined;
  }

  /** Starts waiting for the answer to the authorization started with `state`. */
  expect(state: string): void {
    let settle!: (answer: CallbackAnswer) => void;
    const answer = new Promise<CallbackAnswer>((resolve) => settle = resolve);
    this.#waiting = { state, answer, settle, settled: false };
  }

  /**
   * The answer to the authorization under way, once the browser brings it; rejects with the
   * signal's reason when `signal` aborts first, and at once when no authorization was started.
   */
  answer(signal: AbortSignal): Promise<CallbackAnswer> {
    const waiting = this.#waiting;
    if (waiting === undefined) return Promise.reject(new Error("no authorization is under way"));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const abort = () => reject(signal.reason);
      signal.addEventListener("abort", abort, { once: true });
      waiting.answer.then((answer) => {
        signal.removeEventListener("abort", abort);
        resolve(answer);
      });
    });
  }

  /** Forgets the authorization that was answered, so that a later one can start. */
  reset(): void {
    this.#waiting = undefined;
  }

  /** Stops listening and drops open connections. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  #answer(request: Request): Response {
    const url = new URL(request.url);
    if (url.pathname !== PATH) return page(404, "Not found", "This is not an OAuth callback.");
    if (request.method !== "GET") return page(405, "Not allowed", "Only GET is answered here.");
    const waiting = this.#waiting;
    if (waiting === undefined) {
      return page(400, "No authorization", `amber is not waiting for ${this.#label}'s answer.`);
    }
    if (waiting.settled) {
      return page(410, "Already done", `amber already has ${this.#label}'s answer.`);
    }
    // Anything could send the browser here; only the answer to our own request counts, and a
    // stray request does not end the wait.
    if (url.searchParams.get("state") !== waiting.state) {
      return page(400, "Wrong state", "This answer is not for the authorization amber started.");
    }
    const code = url.searchParams.get("code");
    const error = url.searchParams.get("error");
    if (code !== null && error === null) {
      waiting.settled = true;
      waiting.settle({ code });
      return page(
        200,
        "Authorized",
        `amber is now authorized for ${this.#label}. You can close this window.`,
      );
    }
    const description = url.searchParams.get("error_description") ?? undefined;
    waiting.settled = true;
    waiting.settle({ error: error ?? "no code in the answer", description });
    return page(
      400,
      "Not authorized",
      `${this.#label} refused: ${error ?? "no code"}${description ? ` (${description})` : ""}.`,
    );
  }
}
