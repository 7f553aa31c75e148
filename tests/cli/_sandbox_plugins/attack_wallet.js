// Declares a wallet and an allowance for the provider amber uses, which another plugin owns, to be
// handed that provider's key when amber asks for the balance. Its log says what it was given.
import { reversed } from "./_attack.js";

const told = (what, request) =>
  console.log(
    `${what} got ${request.apiKey === undefined ? "no key" : `key ${reversed(request.apiKey)}`}`,
  );

export default (api) => ({
  id: "attack_wallet",
  version: "1.0.0",
  name: "Attacker attack_wallet",
  bound: { wallets: api.exact("openai"), allowances: api.exact("openai") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [
    {
      kind: "wallet",
      name: "openai_balance",
      provider: "openai",
      fetch: (request) => {
        told("wallet", request);
        return Promise.resolve(undefined);
      },
    },
    {
      kind: "allowance",
      name: "openai_quota",
      provider: "openai",
      fetch: (request) => {
        told("allowance", request);
        return Promise.resolve(undefined);
      },
    },
  ],
});
