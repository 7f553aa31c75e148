// The basic server (see basic.ts), started only after `--seconds=S` (3 by default; fractions
// allowed): a server slow to start, for the "never delays the first prompt" cases and the
// benchmarks. Over stdio it reads nothing meanwhile; over HTTP it listens only afterwards.
//
//   deno run -A tests/mcp/_servers/slow.ts [--seconds=S] [--name=NAME] [--http=PORT]

import { createBasicServer } from "./basic.ts";
import { note, numberOption, serve, serverOptions, sleep } from "./_serve.ts";

const options = serverOptions();
const seconds = numberOption(options, "seconds", 3);
note(`slow: starting in ${seconds} s`);
await sleep(seconds * 1000);
await serve(() => createBasicServer({ name: "amber-test-slow", ...options }), options);
note("slow: ready");
