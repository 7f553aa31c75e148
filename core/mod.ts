/**
 * `@amber/core`: the contracts every amber plugin and host shares, the ledger, the event bus,
 * the plugin runtime and the errors they raise. The contracts import nothing from the engines.
 * The run kernel (run loop, selection, environment snapshots, session files) is
 * `@amber/core/kernel`; the test host for plugin authors is `@amber/core/testing`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus, PluginLedger } from "@amber/core";
 * const bus = new EventBus();
 * const ledger = new PluginLedger();
 * assert.equal(bus.count("turnStarted"), 0);
 * assert.deepEqual(ledger.owners(), []);
 * ```
 *
 * @module
 */

// Contracts: a plugin, its bound, and what it is handed.
export {
  type Plugin,
  PLUGIN_ID_PATTERN,
  PLUGIN_SLUG_PATTERN,
  PluginCategory,
  type PluginPermissions,
  type PluginState,
} from "./plugin.ts";
export {
  admits,
  any,
  type BoundAxis,
  type CapabilityBound,
  describeIdBound,
  exact,
  type IdBound,
  namespace,
  namespacedExact,
} from "./bound.ts";
export type {
  AgentDefinition,
  EditorCallOptions,
  EditorCommand,
  EditorCommandResult,
  EditorService,
  HostServices,
  JobInfo,
  JobService,
  PluginContext,
  PluginServices,
  ProcessPolicy,
  StartedProcess,
  SubagentRunOptions,
  SubagentService,
  TodoItem,
  TodoService,
  Workspace,
} from "./services.ts";
export {
  type AmberConfig,
  type ApprovalPolicy,
  type CompactionConfig,
  type CompatConfig,
  configDir,
  type McpConfig,
  type PermissionsConfig,
  type QuarantineConfig,
  type Seam,
  type SeamTimeouts,
  type SecretsConfig,
  type TimeoutConfig,
} from "./config.ts";
export {
  DeadlineError,
  DEFAULT_QUARANTINE,
  DEFAULT_TIMEOUTS,
  quarantineSettings,
  SEAMS,
  timeoutFor,
  withDeadline,
} from "./limits.ts";
export {
  acquireFileLock,
  DEFAULT_FILE_LOCK_TIMEOUT_MS,
  type FileLock,
  type FileLockOptions,
  FileLockTimeoutError,
  withFileLock,
} from "./file_lock.ts";

// Contracts: capabilities and what installing one returns.
export type { Capability } from "./capability.ts";
export {
  CAPABILITY_KINDS,
  type CapabilityKind,
  type Contribution,
  type ContributionKind,
  declined,
  failed,
  installed,
  type InstallResult,
} from "./contribution.ts";

// Contracts: the registry ports.
export type { NamedEntry, NamedRegistry, OwnedRegistry, RegistryEntry } from "./registry.ts";
export type { Registries } from "./registries.ts";

// Contracts: tools.
export {
  defineTool,
  type FileChange,
  type FromJsonSchema,
  isFileChange,
  isToolResult,
  type JsonSchema,
  type StandardJsonSchema,
  type StandardResult,
  type Tool,
  type ToolArgs,
  type ToolCallContext,
  type ToolDefinition,
  type ToolEntry,
  type ToolImage,
  type ToolInput,
  type ToolResult,
  type ToolSpec,
  type ToolView,
} from "./tool.ts";
export {
  checkStandardArguments,
  type PreparedParameters,
  prepareParameters,
} from "./tool_parameters.ts";
export type { ToolCapability, ToolRegistry } from "./tool_capability.ts";
export {
  deepFreeze,
  ephemeralView,
  readOnlyView,
  ReadOnlyViewError,
  sealedCopy,
} from "./read_only.ts";

// Contracts: prompt blocks, status segments, panels, commands.
export type {
  AssembledPrompt,
  PromptBlockCapability,
  PromptRegistry,
  SealedContext,
} from "./prompt.ts";
export {
  type AgentMode,
  type ComposedSegment,
  type ComposedStatus,
  emptyStatusSnapshot,
  type StatusMcpServer,
  type StatusRegistry,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type StatusText,
  type StatusTone,
} from "./status.ts";
export type { PanelCapability, PanelEntry, PanelRegistry } from "./panel.ts";
export {
  type CommandCapability,
  type CommandHandler,
  type CommandNode,
  type CommandOutcome,
  type CommandRegistry,
  type CommandReply,
  commandReplyProblem,
  type CommandRoot,
  type CommandTreeNode,
  type CommandTurn,
  type CommandWalk,
  walkCommandTree,
} from "./command.ts";

// Contracts: providers, dialects, wallets, allowances, messages.
export type {
  DialectFactory,
  FlavorEntry,
  Preset,
  PresetEntry,
  ProviderCapability,
  ProviderRegistry,
  ResolvedFlavor,
} from "./provider.ts";
export type {
  ChatRequest,
  Dialect,
  FinishReason,
  HttpRequestSpec,
  ProviderSettings,
  StreamDecoder,
  StreamEvent,
  StreamSink,
  SyncDialect,
} from "./dialect.ts";
export type { AccountRequest, WalletCapability, WalletRegistry } from "./wallet.ts";
export type {
  AllowanceCapability,
  AllowanceRegistry,
  AllowanceSnapshot,
  AllowanceWindow,
} from "./allowance.ts";
export type { Message, ToolCall } from "./message.ts";
export { addUsage, type TokenUsage } from "./usage.ts";
export {
  costOf,
  type ModelAbilities,
  type ModelInfo,
  type ModelInfoSource,
  type ModelOverride,
  type ModelPrices,
} from "./model_info.ts";
export type {
  CompactionAdjustment,
  CompactionInput,
  CompactionNext,
  CompactionPlan,
  CompactionReason,
  CompactionResult,
  CompactorCapability,
  SummaryRequest,
} from "./compaction.ts";

// Contracts: the kernel's extension points (hooks, gates, guards, actions, state keys) and the execution environment it runs over.
export {
  type ActionCapability,
  type GateCapability,
  type GateInput,
  type GateOutcome,
  type GuardCapability,
  type GuardInput,
  type HookCapability,
  type HookInput,
  type HookReaction,
  PHASE_HOOK_POINTS,
  type PhaseHookPoint,
  type RunEndDecision,
  type StateCommand,
  type StateKeyCapability,
} from "./hooks.ts";
export type { ResolvedExecutionEnv } from "./execution_env.ts";

// Contracts: events and the host's user interface.
export type {
  AmberEvents,
  EventHandler,
  EventInterceptor,
  HandlerErrorSink,
  InterceptableEvent,
  PluginEvents,
  Subscription,
} from "./events.ts";
export {
  headlessUi,
  type NotifyTone,
  type UiAskOptions,
  type UiService,
  type UiTextOptions,
  UiUnavailableError,
} from "./ui.ts";

// The ledger.
export { PluginLedger, type UnwindFault } from "./ledger.ts";

// The event bus.
export { EventBus } from "./event_bus.ts";

// The plugin runtime: the facade, plugin validation and loading, plugin config.
export { PluginRuntime } from "./runtime.ts";
export type { FaultEvent, FaultEventKind } from "./faults.ts";
export type {
  DisablePlan,
  DisablePlanOptions,
  PlannedRemoval,
  PlannedSwitchOff,
} from "./disable_plan.ts";
export {
  type Diagnostic,
  type FailedPluginRegistration,
  PluginDependentsError,
  type PluginRecordView,
  type PluginRuntimeOptions,
  type RefreshReport,
  type RegisterOptions,
  type SetStateOptions,
  type SetStateResult,
} from "./runtime_types.ts";
export {
  isSemver,
  type PluginField,
  type PluginProblem,
  pluginProblem,
  PluginValidationError,
  validatePlugin,
} from "./plugin_validation.ts";
export {
  createPluginHostApi,
  PLUGIN_HOST_API_VERSION,
  type PluginFactory,
  pluginFromExport,
  type PluginHostApi,
  PluginShapeError,
  pluginShapeProblem,
} from "./plugin_module.ts";
export { type DecodedSection, decodePluginConfig } from "./plugin_config.ts";
export {
  COMMAND_RULE_TOOLS,
  type ParsedPermissions,
  parsePermissionRule,
  parsePermissions,
  PATH_RULE_TOOLS,
  PERMISSION_EFFECTS,
  type PermissionCall,
  type PermissionEffect,
  type PermissionEntry,
  type PermissionPlaces,
  type PermissionProblem,
  type PermissionRule,
  PermissionRuleError,
  PermissionRules,
  type PermissionVerdict,
} from "./permissions.ts";

// Errors.
export {
  AmberError,
  describeError,
  describeValueType,
  PluginFaultError,
  PluginRegistrationError,
  PluginStateError,
  UnknownPluginError,
} from "./errors.ts";
export {
  CapabilityBoundError,
  type ResolutionAxis,
  ResolutionError,
  type ResolutionErrorInit,
  type ResolutionRule,
} from "./resolution_error.ts";
