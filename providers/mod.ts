/**
 * `@amber/providers`: what the core owns on the provider side. Plugins never open their own HTTP
 * client; they read account endpoints through {@linkcode getWithBearer} and
 * {@linkcode getJsonWithBearer}, which never throw, log nothing and never send an empty
 * credential header.
 *
 * @example
 * ```ts
 * import { getJsonWithBearer } from "@amber/providers";
 * // A wallet fetch: nothing honest to report reads as undefined, never as zero.
 * async function balance(baseUrl: string, apiKey?: string): Promise<number | undefined> {
 *   if (!apiKey) return undefined;
 *   const data = await getJsonWithBearer(`${baseUrl}/user/balance`, apiKey);
 *   const total = (data as { total?: unknown } | undefined)?.total;
 *   return typeof total === "number" && total >= 0 ? total : undefined;
 * }
 * console.log(await balance("http://127.0.0.1:1", undefined)); // undefined
 * ```
 *
 * @module
 */

export { getJsonWithBearer, type GetOptions, getWithBearer } from "./http_get.ts";
