// A sandboxed plugin's compactor: `compact` runs in the plugin process on the conversation as
// data, and what it asks back while it runs (a summary from the session's provider, the rest of
// the chain through `next`) crosses to the host as `compaction.summarize` and `compaction.next`,
// naming the compaction by a handle the desk gives out. Everything the process sends is checked
// before the host uses it (see `_compaction_answers.ts`): a malformed answer or request fails
// the compaction with a `SandboxedCompactionError` naming the plugin, even when the process
// caught the refusal of its request, and the kernel falls back on its default strategy.

import type {
  CompactionInput,
  CompactionNext,
  CompactionResult,
  CompactorCapability,
} from "../compaction.ts";
import {
  checkNextInput,
  checkResult,
  checkSummaryRequest,
  SandboxedCompactionError,
} from "./_compaction_answers.ts";
import type { Refuse } from "./_dialect_answers.ts";
import { tokensPerChar } from "./_compaction_estimate.ts";
import type { ProxyLink } from "./_proxy_link.ts";
import { stateEntries } from "./_proxy_hooks.ts";
import { RpcError, RpcErrorCode, type RpcPeer } from "./json_rpc.ts";
import {
  type CapabilityDescriptor,
  type CompactionNextParams,
  type CompactionSummarizeParams,
  type CompactorCompactParams,
  Method,
} from "./protocol.ts";

/**
 * How many summaries one compaction may ask the host for, and how many times it may call `next`
 * with a changed input (each such call may run the default strategy, itself a summary). Every
 * summary is a paid model request: past these the compaction fails, so a process cannot make the
 * host spend without limit while its compaction runs.
 */
export const COMPACTION_ASKS: { readonly summaries: number; readonly nexts: number } = Object
  .freeze({ summaries: 8, nexts: 4 });

// One compaction in flight: what the plugin's requests are answered from.
interface OpenCompaction {
  readonly input: CompactionInput;
  readonly next: CompactionNext;
  readonly refuse: Refuse;
  // The requests it made so far, checked against `COMPACTION_ASKS`.
  summaries: number;
  nexts: number;
  // The first refusal of a request, which fails the compaction however the process took it.
  refused?: SandboxedCompactionError;
}

/**
 * The compactions of one plugin that are running, by handle, and the host's answers to the
 * process's `compaction.*` requests about them.
 */
export class CompactionDesk {
  readonly #open = new Map<number, OpenCompaction>();
  #handles = 0;

  /** Answers `compaction.summarize` and `compaction.next` on `peer` (one per process). */
  listen(peer: RpcPeer): void {
    peer.handle(Method.compactionSummarize, (params) => {
      const { compaction, request } = (params ?? {}) as Partial<CompactionSummarizeParams>;
      const open = this.#find(compaction);
      const checked = this.#checked(open, () => {
        if (++open.summaries > COMPACTION_ASKS.summaries) {
          open.refuse(`asked for more than ${COMPACTION_ASKS.summaries} summaries`);
        }
        return checkSummaryRequest(request, open.refuse);
      });
      return open.input.summarize(checked);
    });
    peer.handle(Method.compactionNext, (params) => {
      const { compaction, input } = (params ?? {}) as Partial<CompactionNextParams>;
      const open = this.#find(compaction);
      const changes = this.#checked(open, () => {
        if (++open.nexts > COMPACTION_ASKS.nexts) {
          open.refuse(`called next more than ${COMPACTION_ASKS.nexts} times`);
        }
        return checkNextInput(input, open.refuse);
      });
      // Nothing changed is the host's own input, as an in-process `next(input)` would pass.
      if (Object.keys(changes).length === 0) return open.next(open.input);
      return open.next({ ...open.input, ...changes });
    });
  }

  /** Opens a compaction and returns its handle. */
  open(input: CompactionInput, next: CompactionNext, refuse: Refuse): number {
    const handle = ++this.#handles;
    this.#open.set(handle, { input, next, refuse, summaries: 0, nexts: 0 });
    return handle;
  }

  /** Closes a compaction: later requests about it are refused. Throws what a request broke. */
  close(handle: number): void {
    const open = this.#open.get(handle);
    this.#open.delete(handle);
    if (open?.refused !== undefined) throw open.refused;
  }

  #find(handle: unknown): OpenCompaction {
    const open = typeof handle === "number" ? this.#open.get(handle) : undefined;
    if (open === undefined) {
      throw new RpcError(RpcErrorCode.InvalidParams, `no compaction ${String(handle)} is running`);
    }
    return open;
  }

  #checked<T>(open: OpenCompaction, check: () => T): T {
    try {
      return check();
    } catch (error) {
      if (error instanceof SandboxedCompactionError) open.refused ??= error;
      throw error;
    }
  }
}

/** The host's compactor for a `compactor` descriptor. */
export function proxyCompactor(
  descriptor: Extract<CapabilityDescriptor, { readonly kind: "compactor" }>,
  link: ProxyLink,
  desk: CompactionDesk,
): CompactorCapability {
  const name = descriptor.name;
  const what = `compactor '${name}' of plugin '${link.pluginId}'`;
  const refuse: Refuse = (message) => {
    throw new SandboxedCompactionError(link.pluginId, what, message);
  };
  return {
    kind: "compactor",
    name,
    compact: async (input, next): Promise<CompactionResult> => {
      const handle = desk.open(input, next, refuse);
      let answer: unknown;
      try {
        const params: CompactorCompactParams = {
          name,
          compaction: handle,
          input: {
            reason: input.reason,
            tokens: input.tokens,
            budget: input.budget,
            threshold: input.threshold,
            keepTurns: input.keepTurns,
            ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
            messages: input.messages,
            state: stateEntries(input.state),
            tokensPerChar: tokensPerChar(input.messages, input.estimate),
          },
        };
        answer = await link.call(Method.compactorCompact, params, "compactor", what, {
          signal: input.signal,
        });
      } finally {
        desk.close(handle);
      }
      return checkResult(answer, refuse);
    },
  };
}
