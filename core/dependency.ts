/**
 * Dependency resolution: which plugins of a selection can activate, in what order, and which
 * must be disabled with a plugin. Pure functions over `{ id, version, requires }` nodes; the
 * caller supplies the semver check.
 *
 * @module
 */

import { ResolutionError } from "./resolution_error.ts";

/**
 * A plugin as dependency resolution sees it: its id, its version and what it requires, by id,
 * each with a version range (`"*"` or `""` for any version).
 */
export interface DependencyNode {
  /** The plugin id. */
  readonly id: string;
  /** Its version. */
  readonly version: string;
  /** The plugins it needs, by id, each with a version range. */
  readonly requires?: { readonly [id: string]: string };
}

/** The outcome of {@linkcode orderPlugins}. */
export interface PluginOrder {
  /** The plugins that can activate, dependencies first. */
  readonly order: readonly string[];
  /** Why each other plugin cannot, by plugin id, in input order. */
  readonly failures: ReadonlyMap<string, ResolutionError>;
}

/**
 * Orders a plugin selection for activation, dependencies first, and says why each plugin that
 * cannot activate cannot:
 *
 * - `"repeated-plugin"`: its id is listed more than once;
 * - `"missing-dependency"`: it requires an id that is not among `nodes`;
 * - `"version-mismatch"`: a required plugin's version does not satisfy the range (`"*"` and `""`
 *   match without calling `satisfies`);
 * - `"dependency-cycle"`: it sits on a cycle; `path` is a true cycle through it (first equals
 *   last), starting from its first member in input order. Every plugin on that cycle holds the
 *   same error object, whose `pluginIds` are the cycle's members;
 * - `"missing-dependency"` again, when a plugin it requires (transitively) cannot activate: `id`
 *   names its first such requirement and `cause` holds that plugin's failure.
 *
 * Its own requirement failures win over a cycle. `order` is Kahn's algorithm over the plugins
 * that did not fail, input order breaking ties: a plugin comes as soon as everything it requires
 * has come, the earliest in input order first. Linear in plugins plus requirements (with a log
 * factor for the ready queue), plus the length of any reported cycles.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { orderPlugins } from "./dependency.ts";
 * import { satisfies } from "semver";
 * const { order, failures } = orderPlugins([
 *   { id: "ui", version: "1.0.0", requires: { core: "^1.0.0" } },
 *   { id: "core", version: "1.2.0" },
 *   { id: "a", version: "1.0.0", requires: { b: "*" } },
 *   { id: "b", version: "1.0.0", requires: { a: "*" } },
 *   { id: "d", version: "1.0.0", requires: { a: "*" } },
 * ], satisfies);
 * assert.deepEqual(order, ["core", "ui"]);
 * assert.equal(failures.get("a")?.message, "dependency cycle: a -> b -> a");
 * assert.equal(
 *   failures.get("d")?.message,
 *   "plugin 'd' requires 'a', which cannot activate: dependency cycle: a -> b -> a",
 * );
 * ```
 */
export function orderPlugins(
  nodes: readonly DependencyNode[],
  satisfies: (version: string, range: string) => boolean,
): PluginOrder {
  const graph = buildGraph(nodes, satisfies);
  const { n, unique, direct, depStart, deps } = graph;

  // Final failure per node, and the failure at the root of each one's chain, so that a
  // transitive message quotes the real reason rather than nesting one level per hop.
  const failed: (ResolutionError | undefined)[] = new Array(n);
  const root: (ResolutionError | undefined)[] = new Array(n);
  let cycles: CycleFinder | undefined;

  // Tarjan emits strongly connected components dependencies first, so every requirement outside
  // a component is final by the time the component is settled.
  tarjan(graph, (members) => {
    const v = members[0];
    const cyclic = members.length > 1 || hasEdge(graph, v, v);
    if (!cyclic) {
      if (direct[v] !== undefined) {
        failed[v] = root[v] = direct[v];
        return;
      }
      for (let e = depStart[v]; e < depStart[v + 1]; e++) {
        const j = deps[e];
        const cause = failed[j];
        if (cause === undefined) continue;
        const rootCause = root[j] ?? cause;
        failed[v] = new ResolutionError({
          rule: "missing-dependency",
          pluginIds: [nodes[v].id],
          id: nodes[j].id,
          message: `plugin '${nodes[v].id}' requires '${nodes[j].id}', which cannot activate: ` +
            rootCause.message,
        }, { cause });
        root[v] = rootCause;
        return;
      }
      return;
    }
    cycles ??= new CycleFinder(graph, nodes);
    const assigned = cycles.settle(members);
    for (const m of members) failed[m] = root[m] = direct[m] ?? assigned.get(m);
  });

  const failures = new Map<string, ResolutionError>();
  for (let i = 0; i < n; i++) {
    const failure = failed[i];
    if (unique[i] && failure !== undefined) failures.set(nodes[i].id, failure);
  }

  // Kahn over the survivors: a survivor's requirements all survived, so its in-degree is simply
  // its number of requirements.
  const { dependentStart, dependents } = graph;
  const pending = new Int32Array(n);
  const ready = new MinHeap(n);
  for (let i = 0; i < n; i++) {
    if (!unique[i] || failed[i] !== undefined) continue;
    pending[i] = depStart[i + 1] - depStart[i];
    if (pending[i] === 0) ready.push(i);
  }
  const order: string[] = [];
  while (ready.size > 0) {
    const v = ready.pop();
    order.push(nodes[v].id);
    for (let e = dependentStart[v]; e < dependentStart[v + 1]; e++) {
      const w = dependents[e];
      if (failed[w] === undefined && --pending[w] === 0) ready.push(w);
    }
  }
  return { order, failures };
}

/**
 * Every plugin that requires `id`, directly or through others, in the order to disable them:
 * furthest dependents first (the reverse of their activation order). `id` itself is not
 * included, even on a cycle; plugins on a cycle come before the rest, in reverse input order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type DependencyNode, dependentsOf } from "./dependency.ts";
 * const nodes: DependencyNode[] = [
 *   { id: "core", version: "1.0.0" },
 *   { id: "ui", version: "1.0.0", requires: { core: "*" } },
 *   { id: "theme", version: "1.0.0", requires: { ui: "*" } },
 *   { id: "solo", version: "1.0.0" },
 * ];
 * assert.deepEqual(dependentsOf(nodes, "core"), ["theme", "ui"]);
 * ```
 */
export function dependentsOf(nodes: readonly DependencyNode[], id: string): string[] {
  const n = nodes.length;
  const index = new Map<string, number>();
  const requirers = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const node = nodes[i];
    if (index.has(node.id)) continue;
    index.set(node.id, i);
    if (node.requires === undefined) continue;
    for (const dep of Object.keys(node.requires)) {
      const list = requirers.get(dep);
      if (list === undefined) requirers.set(dep, [i]);
      else list.push(i);
    }
  }

  // Everything that reaches `id` through requirements.
  const self = index.get(id) ?? -1;
  const inSet = new Uint8Array(n);
  const found: number[] = [];
  const queue: string[] = [id];
  for (let q = 0; q < queue.length; q++) {
    const list = requirers.get(queue[q]);
    if (list === undefined) continue;
    for (const i of list) {
      if (inSet[i] || i === self) continue;
      inSet[i] = 1;
      found.push(i);
      queue.push(nodes[i].id);
    }
  }

  // Activation order of that set (Kahn, input order breaking ties), then reversed.
  const pending = new Int32Array(n);
  const ready = new MinHeap(n);
  for (const i of found) {
    for (const dep of Object.keys(nodes[i].requires ?? {})) {
      const j = index.get(dep);
      if (j !== undefined && inSet[j]) pending[i]++;
    }
    if (pending[i] === 0) ready.push(i);
  }
  const activation: number[] = [];
  const emitted = new Uint8Array(n);
  while (ready.size > 0) {
    const v = ready.pop();
    activation.push(v);
    emitted[v] = 1;
    for (const w of requirers.get(nodes[v].id) ?? []) {
      if (inSet[w] && --pending[w] === 0) ready.push(w);
    }
  }
  // What Kahn could not emit is on a cycle or behind one; nothing emitted requires it, so it can
  // safely go first.
  const result: string[] = [];
  for (let i = n - 1; i >= 0; i--) if (inSet[i] && !emitted[i]) result.push(nodes[i].id);
  for (let k = activation.length - 1; k >= 0; k--) result.push(nodes[activation[k]].id);
  return result;
}

/** The requirement graph in compressed adjacency form, with each node's own failure. */
interface Graph {
  readonly n: number;
  /** Whether node i is the first occurrence of its id (later ones are not in the graph). */
  readonly unique: Uint8Array;
  /** Node i's repeated, missing or version failure. */
  readonly direct: (ResolutionError | undefined)[];
  /** Node i requires deps[depStart[i] .. depStart[i + 1]), in its `requires` order. */
  readonly depStart: Int32Array;
  readonly deps: Int32Array;
  /** Node i is required by dependents[dependentStart[i] .. dependentStart[i + 1]). */
  readonly dependentStart: Int32Array;
  readonly dependents: Int32Array;
}

function buildGraph(
  nodes: readonly DependencyNode[],
  satisfies: (version: string, range: string) => boolean,
): Graph {
  const n = nodes.length;
  const index = new Map<string, number>();
  const unique = new Uint8Array(n);
  const direct: (ResolutionError | undefined)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = nodes[i].id;
    const first = index.get(id);
    if (first === undefined) {
      index.set(id, i);
      unique[i] = 1;
    } else {
      direct[first] ??= new ResolutionError({
        rule: "repeated-plugin",
        pluginIds: [id],
        axis: "plugins",
        id,
        message: `plugin '${id}' is listed more than once`,
      });
    }
  }

  const depStart = new Int32Array(n + 1);
  const edges: number[] = [];
  const indegree = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    depStart[i] = edges.length;
    const node = nodes[i];
    if (!unique[i] || node.requires === undefined) continue;
    for (const dep of Object.keys(node.requires)) {
      const range = node.requires[dep];
      const j = index.get(dep);
      if (j === undefined) {
        direct[i] ??= new ResolutionError({
          rule: "missing-dependency",
          pluginIds: [node.id],
          id: dep,
          message: `plugin '${node.id}' requires '${dep}', which is not installed`,
        });
        continue;
      }
      edges.push(j);
      indegree[j]++;
      if (direct[i] === undefined) direct[i] = versionFailure(node, nodes[j], range, satisfies);
    }
  }
  depStart[n] = edges.length;
  const deps = Int32Array.from(edges);

  // Reverse edges by counting sort, so each node's dependents stay in input order.
  const dependentStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) dependentStart[i + 1] = dependentStart[i] + indegree[i];
  const fill = dependentStart.slice(0, n);
  const dependents = new Int32Array(deps.length);
  for (let i = 0; i < n; i++) {
    for (let e = depStart[i]; e < depStart[i + 1]; e++) dependents[fill[deps[e]]++] = i;
  }
  return { n, unique, direct, depStart, deps, dependentStart, dependents };
}

function versionFailure(
  node: DependencyNode,
  dep: DependencyNode,
  range: string,
  satisfies: (version: string, range: string) => boolean,
): ResolutionError | undefined {
  const wanted = range.trim();
  if (wanted === "" || wanted === "*") return undefined;
  const base = {
    rule: "version-mismatch" as const,
    pluginIds: [node.id],
    id: dep.id,
  };
  try {
    if (satisfies(dep.version, wanted)) return undefined;
  } catch (cause) {
    // A plugin's malformed range is its own failure, not the host's.
    return new ResolutionError({
      ...base,
      message: `plugin '${node.id}' requires '${dep.id}' ${wanted}, which is not a valid range`,
    }, { cause });
  }
  return new ResolutionError({
    ...base,
    message:
      `plugin '${node.id}' requires '${dep.id}' ${wanted}, but '${dep.id}' is ${dep.version}`,
  });
}

function hasEdge(graph: Graph, from: number, to: number): boolean {
  for (let e = graph.depStart[from]; e < graph.depStart[from + 1]; e++) {
    if (graph.deps[e] === to) return true;
  }
  return false;
}

/**
 * Iterative Tarjan over requirement edges: calls `settle` with each strongly connected
 * component, dependencies first. Iterative so that a long requirement chain cannot overflow the
 * call stack.
 */
function tarjan(graph: Graph, settle: (members: number[]) => void): void {
  const { n, unique, depStart, deps } = graph;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack = new Int32Array(n);
  const calls = new Int32Array(n);
  const next = new Int32Array(n);
  let sp = 0;
  let counter = 0;
  for (let s = 0; s < n; s++) {
    if (!unique[s] || order[s] !== -1) continue;
    let cp = 0;
    order[s] = low[s] = counter++;
    stack[sp++] = s;
    onStack[s] = 1;
    next[s] = depStart[s];
    calls[cp++] = s;
    while (cp > 0) {
      const v = calls[cp - 1];
      if (next[v] < depStart[v + 1]) {
        const w = deps[next[v]++];
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack[sp++] = w;
          onStack[w] = 1;
          next[w] = depStart[w];
          calls[cp++] = w;
        } else if (onStack[w] && order[w] < low[v]) {
          low[v] = order[w];
        }
        continue;
      }
      cp--;
      if (cp > 0) {
        const u = calls[cp - 1];
        if (low[v] < low[u]) low[u] = low[v];
      }
      if (low[v] !== order[v]) continue;
      const members: number[] = [];
      let w: number;
      do {
        w = stack[--sp];
        onStack[w] = 0;
        members.push(w);
      } while (w !== v);
      settle(members);
    }
  }
}

/**
 * Finds, for every member of a cyclic component, a simple cycle through it. One breadth-first
 * search each way from the component's first member serves all members: a member's cycle is the
 * forward path to it closed by the backward path home, cut at the first vertex they share.
 */
class CycleFinder {
  readonly #graph: Graph;
  readonly #nodes: readonly DependencyNode[];
  readonly #component: Int32Array;
  readonly #forward: Int32Array;
  readonly #backward: Int32Array;
  readonly #position: Int32Array;
  #stamp = 0;

  constructor(graph: Graph, nodes: readonly DependencyNode[]) {
    this.#graph = graph;
    this.#nodes = nodes;
    this.#component = new Int32Array(graph.n);
    this.#forward = new Int32Array(graph.n);
    this.#backward = new Int32Array(graph.n);
    this.#position = new Int32Array(graph.n).fill(-1);
  }

  /** One cycle error per cycle found, keyed by every member it was given to. */
  settle(members: number[]): Map<number, ResolutionError> {
    const { depStart, deps, dependentStart, dependents } = this.#graph;
    const stamp = ++this.#stamp;
    members.sort((a, b) => a - b);
    const forward = this.#forward;
    const backward = this.#backward;
    // Only members are ever read, so resetting them keeps the work proportional to the component.
    for (const m of members) {
      this.#component[m] = stamp;
      forward[m] = backward[m] = -1;
    }
    const start = members[0];

    // forward[v]: v's predecessor on a shortest start -> v path; closer: the first vertex found
    // that requires start, which closes start's own shortest cycle.
    forward[start] = start;
    let closer = -1;
    const queue = [start];
    for (let q = 0; q < queue.length; q++) {
      const v = queue[q];
      for (let e = depStart[v]; e < depStart[v + 1]; e++) {
        const w = deps[e];
        if (this.#component[w] !== stamp) continue;
        if (w === start && closer === -1) closer = v;
        if (forward[w] !== -1) continue;
        forward[w] = v;
        queue.push(w);
      }
    }
    // backward[v]: v's successor on a shortest v -> start path.
    backward[start] = start;
    queue.length = 0;
    queue.push(start);
    for (let q = 0; q < queue.length; q++) {
      const v = queue[q];
      for (let e = dependentStart[v]; e < dependentStart[v + 1]; e++) {
        const w = dependents[e];
        if (this.#component[w] !== stamp || backward[w] !== -1) continue;
        backward[w] = v;
        queue.push(w);
      }
    }

    const assigned = new Map<number, ResolutionError>();
    const give = (cycle: number[]): void => {
      const error = this.#cycleError(cycle);
      for (let k = 0; k < cycle.length - 1; k++) {
        if (!assigned.has(cycle[k])) assigned.set(cycle[k], error);
      }
    };
    give([...this.#pathTo(closer), start]);
    for (const m of members) {
      if (assigned.has(m)) continue;
      const path = this.#pathTo(m);
      const position = this.#position;
      for (let k = 0; k < path.length; k++) position[path[k]] = k;
      // Walk home from m until the walk meets the forward path: that vertex closes a simple
      // cycle through m (neither path repeats a vertex, and the walk's part is off the path).
      const tail: number[] = [];
      let v = backward[m];
      while (position[v] === -1) {
        tail.push(v);
        v = backward[v];
      }
      const closed = [...path.slice(position[v]), ...tail, v];
      for (const p of path) position[p] = -1;
      give(closed);
    }
    return assigned;
  }

  /** The forward path start -> v, start first. */
  #pathTo(v: number): number[] {
    const path: number[] = [];
    const forward = this.#forward;
    for (let u = v;; u = forward[u]) {
      path.push(u);
      if (forward[u] === u) break;
    }
    return path.reverse();
  }

  /** A cycle (first equals last) rotated to its first member in input order, as an error. */
  #cycleError(cycle: number[]): ResolutionError {
    const open = cycle.slice(0, -1);
    let first = 0;
    for (let k = 1; k < open.length; k++) if (open[k] < open[first]) first = k;
    const rotated = [...open.slice(first), ...open.slice(0, first)];
    const members = rotated.map((i) => this.#nodes[i].id);
    const path = [...members, members[0]];
    return new ResolutionError({
      rule: "dependency-cycle",
      pluginIds: members,
      id: members[0],
      path,
      message: `dependency cycle: ${path.join(" -> ")}`,
    });
  }
}

/** A binary min-heap of node indices: the ready queue, earliest input first. */
class MinHeap {
  readonly #items: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.#items = new Int32Array(capacity);
  }

  push(value: number): void {
    const items = this.#items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent] <= value) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.#items;
    const top = items[0];
    const last = items[--this.size];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && items[child + 1] < items[child]) child++;
      if (items[child] >= last) break;
      items[i] = items[child];
      i = child;
    }
    items[i] = last;
    return top;
  }
}
