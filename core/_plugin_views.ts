// The views a plugin's scope hands out of what others own: the tools, the host's services. Each
// is made once per underlying object (cached by identity) and frozen, so a plugin can read and
// call what it was given but never replace a method the host or another plugin relies on.

import { readOnlyView } from "./read_only.ts";
import type {
  AgentDefinition,
  EditorCallOptions,
  EditorCommand,
  EditorService,
  HostServices,
  JobService,
  ProcessPolicy,
  StartedProcess,
  SubagentRunOptions,
  SubagentService,
  TodoService,
} from "./services.ts";
import type { Tool, ToolEntry, ToolView } from "./tool.ts";
import type { UiService } from "./ui.ts";

const entryViews = new WeakMap<ToolEntry, ToolEntry>();
const listViews = new WeakMap<readonly ToolEntry[], readonly ToolEntry[]>();
const toolViews = new WeakMap<ToolView, ToolView>();

/**
 * The view of the tools a plugin gets: entries whose tool is a frozen stand-in (its fields read
 * through to the tool, its methods call the tool's own), with the schema read-only. The list is
 * the same array for as long as the registry's is, so a plugin may cache by identity.
 */
export function toolViewOf(source: ToolView): ToolView {
  let view = toolViews.get(source);
  if (view === undefined) {
    view = Object.freeze({
      get(name: string): ToolEntry | undefined {
        const entry = source.get(name);
        return entry === undefined ? undefined : entryView(entry);
      },
      list(): readonly ToolEntry[] {
        const entries = source.list();
        let listed = listViews.get(entries);
        if (listed === undefined) {
          listed = Object.freeze(entries.map(entryView));
          listViews.set(entries, listed);
        }
        return listed;
      },
    });
    toolViews.set(source, view);
  }
  return view;
}

function entryView(entry: ToolEntry): ToolEntry {
  let view = entryViews.get(entry);
  if (view === undefined) {
    view = Object.freeze({
      tool: standIn(entry.tool),
      owner: entry.owner,
      schema: readOnlyView(entry.schema),
    });
    entryViews.set(entry, view);
  }
  return view;
}

// Getters without setters on a frozen object: reading is live, assigning throws in strict code.
// The methods call the tool's own with the tool as `this`, so a tool that is a class instance
// still works.
function standIn(tool: Tool): Tool {
  const view: Tool = {
    get name() {
      return tool.name;
    },
    get description() {
      return tool.description;
    },
    get parameters() {
      return readOnlyView(tool.parameters);
    },
    get verb() {
      return tool.verb;
    },
    get readOnly() {
      return tool.readOnly;
    },
    execute: (args, context) => tool.execute(args, context),
  };
  if (typeof tool.requiresApproval === "function") {
    view.requiresApproval = (args) => tool.requiresApproval!(args);
  }
  if (typeof tool.summarize === "function") view.summarize = (args) => tool.summarize!(args);
  return Object.freeze(view);
}

// One view maker per member of HostServices: the mapped type makes a member added to the
// interface without a view here a type error, so no service reaches plugins unviewed.
type ServiceViews = {
  readonly [K in keyof HostServices]-?: (
    service: NonNullable<HostServices[K]>,
  ) => NonNullable<HostServices[K]>;
};

const SERVICE_VIEWS: ServiceViews = {
  jobs: jobsView,
  todos: todosView,
  subagents: subagentsView,
  // Not frozen: Deno keeps a signal's state in its own properties, which aborting writes.
  signal: (signal) => AbortSignal.any([signal]),
  ui: uiView,
  processes: processesView,
  editor: editorView,
};

/**
 * The host's services as one plugin gets them: each service a frozen object with exactly the
 * methods of its interface, calling the host's own; what they return is read-only. The cancel
 * signal is the plugin's own and aborts with the host's, so nothing done to it reaches the host
 * or another plugin. The caller makes one per plugin scope and keeps it.
 */
export function hostServicesView(host: HostServices): HostServices {
  const view: Record<string, unknown> = {};
  for (const key of Object.keys(SERVICE_VIEWS) as (keyof HostServices)[]) {
    const service = host[key];
    if (service === undefined) continue;
    view[key] = (SERVICE_VIEWS[key] as (service: unknown) => unknown)(service);
  }
  return Object.freeze(view) as HostServices;
}

function jobsView(jobs: JobService): JobService {
  return Object.freeze({
    start: (command: readonly string[]) => jobs.start(command).then(readOnlyView),
    read: (id: string) => jobs.read(id).then(readOnlyView),
    stop: (id: string) => jobs.stop(id).then(readOnlyView),
    list: () => readOnlyView(jobs.list()),
  });
}

function todosView(todos: TodoService): TodoService {
  return Object.freeze({
    list: () => readOnlyView(todos.list()),
    write: (items: Parameters<TodoService["write"]>[0]) => todos.write(items),
  });
}

// The agent a plugin names is copied and frozen on its way in: the host keeps no object the
// plugin could change while the sub-agent runs. The list it gets back is read-only.
function subagentsView(subagents: SubagentService): SubagentService {
  const view: SubagentService = {
    run: (prompt: string, options: SubagentRunOptions) => {
      const { signal, agent } = options;
      return subagents.run(
        prompt,
        agent === undefined ? { signal } : { signal, agent: frozenAgent(agent) },
      );
    },
  };
  if (typeof subagents.agents === "function") {
    view.agents = () => readOnlyView(subagents.agents!());
  }
  return Object.freeze(view);
}

function frozenAgent(agent: AgentDefinition): AgentDefinition {
  const { name, description, systemPrompt, tools, model, path } = agent;
  return Object.freeze({
    name,
    description,
    systemPrompt,
    ...(tools === undefined ? {} : { tools: Object.freeze([...tools]) }),
    ...(model === undefined ? {} : { model }),
    ...(path === undefined ? {} : { path }),
  });
}

// The environment is a fresh copy for each call: a plugin may add to it for its own process,
// and no other process sees that.
function processesView(processes: ProcessPolicy): ProcessPolicy {
  return Object.freeze({
    environment: () => {
      const { env, secrets } = processes.environment();
      return { env: { ...env }, secrets: [...secrets] };
    },
    track: (group: StartedProcess, command: readonly string[]) => processes.track(group, command),
  });
}

// Only the members the editor offers: a tool tells what it may use by which are there. The
// command a plugin passes is copied, so what the editor service keeps is not the plugin's object.
function editorView(editor: EditorService): EditorService {
  const view: EditorService = {};
  if (editor.readTextFile !== undefined) {
    view.readTextFile = (path: string, options?: EditorCallOptions) =>
      editor.readTextFile!(path, options);
  }
  if (editor.writeTextFile !== undefined) {
    view.writeTextFile = (path: string, text: string, options?: EditorCallOptions) =>
      editor.writeTextFile!(path, text, options);
  }
  if (editor.runCommand !== undefined) {
    // Copied inside the promise: a plugin's malformed command is a rejection, never a throw.
    view.runCommand = (command: EditorCommand) =>
      Promise.resolve().then(() =>
        editor.runCommand!({
          ...command,
          args: [...command.args],
          ...(command.env === undefined ? {} : { env: { ...command.env } }),
        })
      ).then(readOnlyView);
  }
  return Object.freeze(view);
}

function uiView(ui: UiService): UiService {
  return Object.freeze(
    {
      get interactive() {
        return ui.interactive;
      },
      askText: (question, options) => ui.askText(question, options),
      askSecret: (question, options) => ui.askSecret(question, options),
      choose: (question, choices, options) => ui.choose(question, choices, options),
      confirm: (question, options) => ui.confirm(question, options),
      notify: (message, tone) => ui.notify(message, tone),
    } satisfies UiService,
  );
}
