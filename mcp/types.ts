/**
 * The shapes every part of `@amber/mcp` agrees on: a server's configuration entry, where it came
 * from, and the state of its connection.
 *
 * @module
 */

/** How amber reaches a server. */
export type McpTransportKind = "stdio" | "http" | "sse";

/**
 * OAuth for a remote server that requires it. `true` in the entry means all defaults: the client
 * registers itself dynamically, the callback listens on a free loopback port.
 */
export interface McpOAuthSettings {
  /** A client id registered beforehand, for a server without dynamic registration. */
  readonly clientId?: string;
  /** The environment variable holding that client's secret, if it has one. */
  readonly clientSecretEnv?: string;
  /** The scopes to ask for, space separated. */
  readonly scope?: string;
  /** The loopback port of the callback; a free one when absent. */
  readonly callbackPort?: number;
}

/**
 * One server as `config.yaml` (`mcp.servers.NAME`) or a workspace's `.mcp.json`
 * (`mcpServers.NAME`) declares it, after checking and before `${VAR}` expansion: the strings
 * still hold their `${VAR}` references, which are expanded when the server is started, so that a
 * secret is read from the environment of the process that uses it and never written back.
 */
export interface McpServerEntry {
  /** `stdio` when `command` is given, `http` when `url` is (unless `sse` is named). */
  readonly transport: McpTransportKind;
  /** stdio: the program. */
  readonly command?: string;
  /** stdio: its arguments. */
  readonly args?: readonly string[];
  /** stdio: variables added to the small default environment (HOME, PATH, ...). */
  readonly env?: { readonly [name: string]: string };
  /** stdio: its working directory, relative to the workspace; the workspace by default. */
  readonly cwd?: string;
  /** http/sse: the endpoint. */
  readonly url?: string;
  /** http/sse: headers sent with every request. */
  readonly headers?: { readonly [name: string]: string };
  /** http/sse: the environment variable whose value is sent as `Authorization: Bearer ...`. */
  readonly bearerTokenEnv?: string;
  /** http/sse: OAuth, for a server that answers 401 without it. */
  readonly oauth?: McpOAuthSettings;
  /** MCP tool names (the server's own) not offered to the model. */
  readonly disabledTools?: readonly string[];
  /**
   * Whether tools the server marks `readOnlyHint` run without asking (the `mcp.trustReadOnly`
   * default otherwise, false unless set).
   */
  readonly trustReadOnly?: boolean;
  /** The deadline of one request (a tool call, a read), in seconds; 60 by default. */
  readonly timeout?: number;
}

/** A server with its name and the file that declared it. */
export interface McpServerSpec {
  /** The name as written: `[A-Za-z0-9_-]`, at most 48 characters. */
  readonly name: string;
  /** The plugin id, `mcp.<name in lower case>`. */
  readonly pluginId: string;
  /** The entry. */
  readonly entry: McpServerEntry;
  /** Where it was declared: `config.yaml` or the path of a workspace's `.mcp.json`. */
  readonly source: string;
  /** True when a workspace file declared it: it starts only once the user approved it. */
  readonly fromWorkspace: boolean;
}

/** Where a server's connection stands. */
export type McpConnectionState =
  /** The plugin is off, or the host does not connect (a command such as `amber plugins list`). */
  | { readonly status: "idle" }
  | { readonly status: "connecting"; readonly attempt: number }
  | {
    readonly status: "connected";
    readonly transport: McpTransportKind;
    /** The server's name and version, as it introduced itself. */
    readonly server: string;
  }
  /** Lost; the next attempt is at `retryAt` (epoch ms). */
  | {
    readonly status: "reconnecting";
    readonly attempt: number;
    readonly retryAt: number;
    readonly reason: string;
  }
  /** Given up on (too many failed attempts), or closed by the user. */
  | { readonly status: "failed"; readonly reason: string };

/**
 * A server's request for an answer from the session's model (the params of MCP's
 * `sampling/createMessage`): the fields amber reads are named, the rest of the specification's
 * are passed along as they came.
 */
export interface McpSamplingRequest {
  /** The conversation to answer; each content is a block or a list of blocks (`{type, ...}`). */
  readonly messages: readonly { readonly role: "user" | "assistant"; readonly content: unknown }[];
  /** The system prompt the server asks for. */
  readonly systemPrompt?: string;
  /** The most tokens of the answer. */
  readonly maxTokens: number;
  /** The sampling temperature. */
  readonly temperature?: number;
  /** Any other field of the request. */
  readonly [field: string]: unknown;
}

/** The answer to a {@linkcode McpSamplingRequest} (MCP's `CreateMessageResult`). */
export interface McpSamplingResult {
  /** The role of the answer: the assistant's. */
  readonly role: "user" | "assistant";
  /** The answer: a content block such as `{type: "text", text}`. */
  readonly content: unknown;
  /** The model that answered. */
  readonly model: string;
  /** Why it stopped: `endTurn`, `maxTokens`, `stopSequence` or the provider's own reason. */
  readonly stopReason?: string;
  /** Any other field of the result. */
  readonly [field: string]: unknown;
}

/**
 * A server's question to the user (the params of MCP's `elicitation/create`): a message with the
 * schema of a form to fill, or a URL to open.
 */
export interface McpElicitationRequest {
  /** What the server asks. */
  readonly message: string;
  /** Any other field: `mode`, `requestedSchema`, `url`... */
  readonly [field: string]: unknown;
}

/** The user's answer to an {@linkcode McpElicitationRequest}. */
export interface McpElicitationResult {
  /** What the user did. */
  readonly action: "accept" | "decline" | "cancel";
  /** The form's values, when accepted. */
  readonly content?: { readonly [field: string]: unknown };
  /** Any other field of the result. */
  readonly [field: string]: unknown;
}
