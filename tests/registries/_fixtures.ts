// Shared fixtures for the registry tests: the services a plugin is installed with, readers of an
// install result, and an account fetch the test settles by hand.

import {
  type AccountRequest,
  type Contribution,
  EventBus,
  type InstallResult,
  type PluginServices,
} from "@amber/core";

/** Services for a plugin `owner`: no tools, a fresh event bus, an empty config. */
export function services(owner: string): PluginServices {
  return {
    owner,
    tools: { get: () => undefined, list: () => [] },
    events: new EventBus(),
    config: () => ({ plugins: {} }),
    host: {},
    workspace: { root: "/tmp" },
  };
}

/** The contribution of an install that must have succeeded. */
export function contributionOf(result: InstallResult): Contribution {
  if (result.status !== "installed") {
    throw new Error(`expected installed, got ${JSON.stringify(result)}`);
  }
  return result.contribution;
}

/** The error of an install that must have failed. */
export function errorOf(result: InstallResult): string {
  if (result.status !== "failed") throw new Error(`expected failed, got ${JSON.stringify(result)}`);
  return result.error;
}

/** The entry a failed install collided with, if any. */
export function conflictOf(
  result: InstallResult,
): { readonly id: string; readonly owner: string } | undefined {
  if (result.status !== "failed") throw new Error(`expected failed, got ${JSON.stringify(result)}`);
  return result.conflict;
}

/** Lets every pending microtask and promise callback run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** An account fetch (wallet or allowance) whose every call waits until the test settles it. */
export class ControlledFetch<T> {
  readonly requests: AccountRequest[] = [];
  readonly pending: Array<PromiseWithResolvers<T | undefined>> = [];

  /** The fetch to give a capability: records the request, answers when settled. */
  readonly fetch = (request: AccountRequest): Promise<T | undefined> => {
    this.requests.push(request);
    const call = Promise.withResolvers<T | undefined>();
    this.pending.push(call);
    return call.promise;
  };

  /** Settles the oldest fetch not yet settled. */
  resolve(value: T | undefined): void {
    this.pending.shift()!.resolve(value);
  }

  /** Fails the oldest fetch not yet settled. */
  reject(error: unknown): void {
    this.pending.shift()!.reject(error);
  }
}
