// A third-party plugin for the real-process dialect test: a provider speaking a wire of its own
// ("wire": each event's data is `{"text": ...}`, `{"done": true}` ends it). It imports nothing of
// amber, as a plugin from npm need not, and runs with no permission but reading its folder.

interface Sink {
  (event: { type: string; [field: string]: unknown }): void;
}

export default {
  id: "wire",
  version: "1.0.0",
  name: "Wire",
  bound: { flavors: { kind: "any" }, presets: { kind: "any" } },
  permissions: { env: ["WIRE_KEY"] },
  initialize: () => true,
  shutdown: () => {},
  capabilities: () => [{
    kind: "provider",
    name: "wire",
    flavor: "wire",
    presets: [{
      name: "wire",
      flavor: "wire",
      baseUrl: "http://127.0.0.1:9",
      defaultModel: "wire-1",
      requiresKey: true,
      keyEnv: "WIRE_KEY",
    }],
    dialect: () => ({
      flavor: "wire",
      chatRequest: (
        settings: { baseUrl: string; apiKey?: string },
        request: { model: string; messages: unknown[] },
      ) => ({
        url: `${settings.baseUrl}/chat`,
        method: "POST",
        headers: settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {},
        body: JSON.stringify({ model: request.model, messages: request.messages }),
      }),
      decoder: () => {
        let finished = false;
        return {
          event(_name: string | undefined, data: string, sink: Sink) {
            const message = JSON.parse(data);
            if (typeof message.text === "string") sink({ type: "text", delta: message.text });
            if (message.done === true && !finished) {
              finished = true;
              sink({ type: "finish", reason: "stop" });
            }
          },
          end(sink: Sink) {
            if (!finished) sink({ type: "finish", reason: "other" });
            finished = true;
          },
        };
      },
      isRetryable: (status: number) => status === 429 || status >= 500,
      errorMessage: (status: number, body: string) => `wire ${status}: ${body}`,
      isContextOverflow: () => false,
    }),
  }],
};
