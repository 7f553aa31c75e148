// A connector for McpServers / McpServerPlugin that reaches an SDK server in this process over
// the SDK's in-memory transport, set up the way connectServer sets up a client (roots, and
// sampling and elicitation answered by the handlers it is given). It lets a test hold a server's
// start, end a connection from the server's side, and count the attempts.

// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ConnectOptions, McpConnection } from "../../mcp/connect.ts";

/** An SDK server, high level (`McpServer`) or low level (`Server`). */
export interface MemoryServer {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** What a test sees of the connector. */
export interface MemoryConnector {
  /** Pass as `connector`. */
  readonly connect: (options: ConnectOptions) => Promise<McpConnection>;
  /** The servers connected so far, oldest first. */
  readonly servers: MemoryServer[];
  /** How many connects were asked for. */
  readonly attempts: () => number;
  /** The options of the last connect. */
  readonly last: () => ConnectOptions | undefined;
}

/**
 * A connector that builds a server with `create` for each connect. `gate`, when given, is awaited
 * before the server answers (a slow start); `create` may throw (a failed start).
 */
export function memoryConnector(
  create: () => MemoryServer,
  gate?: () => Promise<void>,
): MemoryConnector {
  const servers: MemoryServer[] = [];
  let attempts = 0;
  let last: ConnectOptions | undefined;
  const connect = async (options: ConnectOptions): Promise<McpConnection> => {
    attempts++;
    last = options;
    await gate?.();
    options.signal?.throwIfAborted();
    const server = create();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    servers.push(server);
    const { handlers } = options;
    const client = new Client({ name: "amber-test", version: "1.0.0" }, {
      capabilities: {
        roots: { listChanged: true },
        ...(handlers.sample === undefined ? {} : { sampling: {} }),
        ...(handlers.elicit === undefined ? {} : { elicitation: {} }),
      },
    });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [...handlers.roots()] }));
    const { sample, elicit } = handlers;
    if (sample !== undefined) {
      client.setRequestHandler(
        CreateMessageRequestSchema,
        (request, extra) => sample(request.params, extra.signal),
      );
    }
    if (elicit !== undefined) {
      client.setRequestHandler(
        ElicitRequestSchema,
        (request, extra) => elicit(request.params, extra.signal),
      );
    }
    const { promise: closed, resolve } = Promise.withResolvers<string>();
    client.onclose = () => resolve("the server closed the connection");
    await client.connect(clientSide, { timeout: options.timeoutMs });
    const version = client.getServerVersion();
    return {
      client,
      transport: "stdio",
      server: `${version?.name} ${version?.version}`,
      closed,
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  };
  return { connect, servers, attempts: () => attempts, last: () => last };
}

/** Resolves once `check()` holds, polling every few ms; rejects after `ms`. */
export async function until(
  check: () => boolean,
  ms = 5_000,
  what = "the condition",
): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
