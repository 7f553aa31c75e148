// The host's stand-in for the dialect of a provider that a sandboxed plugin contributes: a
// `Dialect` whose every member crosses to the plugin process (`dialect.*` in `protocol.ts`) and
// answers with a promise, which the core HTTP client waits for. The host keeps the network: the
// plugin's dialect builds requests and decodes frames, and the host checks each request goes to
// the provider's own origin before it sends it (`_dialect_answers.ts`).
//
// The settings handed to `chatRequest` and `modelsRequest` carry the key the user configured
// for this provider, and cross to the plugin process with them: the dialect must put the key in
// a header. No other key crosses.

import type { AllowanceSnapshot } from "../allowance.ts";
import type { ChatRequest, Dialect, HttpRequestSpec, ProviderSettings } from "../dialect.ts";
import { RpcError } from "./json_rpc.ts";
import {
  checkAllowance,
  checkCreated,
  checkModels,
  checkReading,
  checkSpec,
  type Refuse,
  SandboxedDialectError,
} from "./_dialect_answers.ts";
import { ProxyStreamDecoder, type StreamChannel } from "./_dialect_stream.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import {
  type DialectCreated,
  type DialectErrorReading,
  Method,
  UNKNOWN_DIALECT,
} from "./protocol.ts";

export { SandboxedDialectError } from "./_dialect_answers.ts";

/**
 * The dialect of `flavor` that runs in the plugin process behind `link`: a provider
 * capability's dialect factory for a sandboxed plugin is `() => proxyDialect(link, flavor)`.
 * It asks the process to make the dialect (its factory runs once per client, as in-process)
 * and resolves with a stand-in that has the optional members the plugin's dialect has.
 *
 * Every call runs under the `hook` deadline (a dialect's work is quick and on the step's path);
 * past it the process is killed. What the client reads of one error response (retryable,
 * message, context overflow, retry delay) comes in one round trip. The plugin's own errors, and
 * answers the host cannot use, reject with a {@linkcode SandboxedDialectError}.
 */
export async function proxyDialect(link: ProxyLink, flavor: string): Promise<Dialect> {
  const what = `the '${flavor}' dialect of plugin '${link.pluginId}'`;
  const refuse: Refuse = (message) => {
    throw new SandboxedDialectError(link.pluginId, flavor, message);
  };
  const call = (method: string, params: unknown): Promise<unknown> =>
    link.call(method, params, "hook", what);
  const mistake = (error: unknown): unknown =>
    error instanceof RpcError
      ? new SandboxedDialectError(link.pluginId, flavor, `failed: ${error.message}`, {
        cause: error,
      })
      : error;

  const create = async (): Promise<DialectCreated> => {
    try {
      return checkCreated(await call(Method.dialectCreate, { flavor }), refuse);
    } catch (error) {
      throw mistake(error);
    }
  };
  let created = await create();
  let remaking: Promise<DialectCreated> | undefined;
  // A call naming the dialect's handle. A process started again (the plugin was switched off
  // and on) holds no handle of the one before: the dialect is made again there, once.
  const ask = async (
    method: string,
    params: (handle: number) => object,
  ): Promise<unknown> => {
    const handle = created.dialect;
    try {
      return await call(method, params(handle));
    } catch (error) {
      if (!(error instanceof RpcError && error.data === UNKNOWN_DIALECT)) throw mistake(error);
    }
    if (created.dialect === handle) {
      remaking ??= create().finally(() => remaking = undefined);
      created = await remaking;
    }
    try {
      return await call(method, params(created.dialect));
    } catch (error) {
      throw mistake(error);
    }
  };

  let last: { status: number; body: string; reading: Promise<DialectErrorReading> } | undefined;
  const reading = (status: number, body: string): Promise<DialectErrorReading> => {
    if (last !== undefined && last.status === status && last.body === body) return last.reading;
    const answer = ask(Method.dialectError, (dialect) => ({ dialect, status, body }))
      .then((value) => checkReading(value, refuse));
    const entry = { status, body, reading: answer };
    last = entry;
    // A failed reading is not kept: the next error asks again.
    answer.catch(() => {
      if (last === entry) last = undefined;
    });
    return answer;
  };

  const channel: StreamChannel = {
    request: async (method, params) => {
      try {
        return await call(method, params);
      } catch (error) {
        throw mistake(error);
      }
    },
    notify: (method, params) => link.notify(method, params),
    refuse,
    failed: (message) =>
      new SandboxedDialectError(link.pluginId, flavor, `could not decode the stream: ${message}`),
  };

  const dialect: Dialect = {
    flavor,
    chatRequest: async (
      settings: ProviderSettings,
      request: ChatRequest,
    ): Promise<HttpRequestSpec> =>
      checkSpec(
        await ask(Method.dialectChatRequest, (dialect) => ({ dialect, settings, request })),
        settings,
        refuse,
      ),
    decoder: () => new ProxyStreamDecoder(channel, created.dialect),
    isRetryable: async (status: number, body: string) => (await reading(status, body)).retryable,
    errorMessage: async (status: number, body: string) => (await reading(status, body)).message,
    isContextOverflow: async (status: number, body: string) =>
      (await reading(status, body)).contextOverflow,
  };
  const members: Partial<Dialect> = {};
  if (created.retryDelay) {
    members.retryDelayMs = async (status: number, body: string) =>
      (await reading(status, body)).retryDelayMs ?? undefined;
  }
  if (created.models) {
    members.modelsRequest = async (settings: ProviderSettings): Promise<HttpRequestSpec> =>
      checkSpec(
        await ask(Method.dialectModelsRequest, (dialect) => ({ dialect, settings })),
        settings,
        refuse,
      );
    members.parseModels = async (body: string): Promise<string[]> =>
      checkModels(await ask(Method.dialectParseModels, (dialect) => ({ dialect, body })), refuse);
  }
  if (created.allowance) {
    members.allowanceFromHeaders = async (
      headers: Headers,
    ): Promise<AllowanceSnapshot | undefined> =>
      checkAllowance(
        await ask(Method.dialectAllowance, (dialect) => ({ dialect, headers: [...headers] })),
        refuse,
      );
  }
  return Object.freeze({ ...dialect, ...members });
}
