/**
 * `deno task test`: runs `deno test` with the arguments given, and prints a compact progress
 * (one character per test, as Deno's dot reporter draws them, wrapped into lines) instead of a
 * line per test, then every failure with its name and error, then the plain line
 * `N passed, N failed` (and the skipped count), read from the JUnit report. The report is written
 * where `--junit-path` says (as `.ci/run` asks), else to a temporary file that is removed. The
 * tests run with amber's cache folder (AMBER_CACHE_DIR) in a temporary folder, unless it is set.
 * The exit code is `deno test`'s.
 *
 * Run as `deno run --allow-run --allow-read --allow-write --allow-env .ci/test_summary.ts
 * <deno test arguments>`.
 *
 * @module
 */

const WIDTH = 80;
// A failure's text is its error and stack; past this many lines it is cut, the rest being the
// runtime's own frames.
const FAILURE_LINES = 25;

/** One test case of the JUnit report. */
interface TestCase {
  /** The file, as Deno names it (`./tests/cli/x_test.ts`). */
  readonly file: string;
  /** The test's name (a step's is `parent ... step`). */
  readonly name: string;
  /** `passed`, `failed` or `skipped`. */
  readonly outcome: "passed" | "failed" | "skipped";
  /** The failure's text, for a failed one. */
  readonly failure?: string;
}

// The reporter's colours (an escape, then `[...m`), built from the code: a literal control
// character in a pattern reads as a mistake.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

function decodeXml(text: string): string {
  return text.replace(
    /&(lt|gt|quot|apos|amp|#(\d+));/g,
    (_, name: string, code?: string) =>
      code !== undefined
        ? String.fromCharCode(Number(code))
        : { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" }[name]!,
  );
}

// Deno's JUnit report is regular: one <testcase> per test, with a <failure> or <skipped> inside
// when it did not pass; no XML library is needed for that shape.
function readCases(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  const pattern = /<testcase\s([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const match of xml.matchAll(pattern)) {
    const attributes = match[1];
    const body = match[3] ?? "";
    const attribute = (key: string) =>
      decodeXml(new RegExp(`${key}="([^"]*)"`).exec(attributes)?.[1] ?? "");
    const failure = /<(failure|error)\b[^>]*?(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    const skipped = /<skipped\b/.test(body);
    cases.push({
      file: attribute("classname"),
      name: attribute("name"),
      outcome: failure ? "failed" : skipped ? "skipped" : "passed",
      ...(failure ? { failure: withoutRuntimeFrames(decodeXml(failure[2] ?? "")) } : {}),
    });
  }
  return cases;
}

// The test runner's own stack frames (`ext:cli/...`) say nothing about the test.
function withoutRuntimeFrames(text: string): string {
  return text.replace(ANSI, "").split("\n").filter((line) => !/^\s*at .*\(ext:/.test(line))
    .join("\n");
}

function clipLines(text: string, limit: number): string {
  const lines = text.trimEnd().split("\n");
  if (lines.length <= limit) return lines.join("\n");
  return [...lines.slice(0, limit), `    ... ${lines.length - limit} more lines`].join("\n");
}

async function main(args: readonly string[]): Promise<number> {
  const given = args.find((arg) => arg.startsWith("--junit-path="))?.slice("--junit-path=".length);
  const report = given ?? await Deno.makeTempFile({ suffix: ".xml" });
  const rest = args.filter((arg) => !arg.startsWith("--junit-path=") && arg !== "--reporter=dot");
  // amber keeps what the price table says of a model in its cache folder (`~/.cache/amber` unless
  // AMBER_CACHE_DIR names one): the tests' sessions get one of their own, removed afterwards, so
  // that running the tests writes nothing into the user's home.
  const cacheDir = Deno.env.get("AMBER_CACHE_DIR") === undefined
    ? await Deno.makeTempDir({ prefix: "amber-test-cache-" })
    : undefined;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--reporter=dot", `--junit-path=${report}`, ...rest],
    env: cacheDir === undefined ? {} : { AMBER_CACHE_DIR: cacheDir },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();

  // The dots go out as they come, wrapped; every other line of the reporter is kept, and shown
  // only when the report cannot say what happened (a crash before any test ran).
  const encoder = new TextEncoder();
  const other: string[] = [];
  let column = 0;
  let pending = "";
  const decoder = new TextDecoder();
  const take = (line: string) => {
    const plain = line.replace(ANSI, "");
    if (/^[.!,]+$/.test(plain.trim())) {
      for (const mark of plain.trim()) {
        Deno.stdout.writeSync(encoder.encode(column === WIDTH ? `\n${mark}` : mark));
        column = column === WIDTH ? 1 : column + 1;
      }
    } else {
      other.push(plain);
    }
  };
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    lines.forEach(take);
  }
  if (pending !== "") take(pending);
  if (column > 0) console.log();
  const status = await child.status;

  let cases: TestCase[] | undefined;
  try {
    cases = readCases(await Deno.readTextFile(report));
  } catch {
    // No report: `deno test` stopped before running (a type error); its output says why.
  }
  if (given === undefined) await Deno.remove(report).catch(() => {});
  if (cacheDir !== undefined) await Deno.remove(cacheDir, { recursive: true }).catch(() => {});
  if (cases === undefined || (status.code !== 0 && !cases.some((c) => c.outcome === "failed"))) {
    console.log(other.join("\n").trim());
  }
  cases ??= [];
  const failed = cases.filter((c) => c.outcome === "failed");
  for (const [i, failure] of failed.entries()) {
    console.log(`\nFAILED ${i + 1}/${failed.length}: ${failure.file} > ${failure.name}`);
    console.log(clipLines(failure.failure ?? "(no message)", FAILURE_LINES).replace(/^/gm, "  "));
  }
  const count = (outcome: TestCase["outcome"]) => cases.filter((c) => c.outcome === outcome).length;
  if (failed.length > 0) {
    console.log(`\nfailed: ${failed.map((c) => `${c.file} > ${c.name}`).join("\n        ")}`);
  }
  console.log(`${count("skipped")} skipped`);
  console.log(`${count("passed")} passed, ${failed.length} failed`);
  return status.code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
