/**
 * `enrich_campaign` as a task of the MCP Tasks extension (docs/agents.md
 * "Long runs: tasks"), on a stateless server: a task is one launch of one
 * campaign, its ID is `<campaignId>/<attemptId>`, and its state is the
 * campaign's own, read through the operations with the caller's key at each
 * `tasks/get`. No process keeps anything, so any instance answers, and a
 * key that cannot read the campaign cannot read the task.
 *
 * - `working` while the attempt enriches, its status message the progress
 *   (`processed` of `eligible` accounts, the results' own figures);
 * - `completed` once it is `enriched` (or its results have since expired); the
 *   result is the campaign;
 * - `cancelled` / `failed` when the campaign is back in `draft` with
 *   `lastEnrichment.status` `canceled` / `failed`;
 * - `tasks/cancel` is `cancel_campaign`: the exact refund of
 *   docs/launch.md#canceling.
 *
 * A launch refused before any attempt (credits, limits, `charge_changed`…)
 * charges nothing; its task is `failed` at once and its ID carries the error
 * (`<campaignId>/refused/<base64url JSON>`), which `tasks/result` answers as
 * the tool's `isError` result.
 */
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { TOOL_NAMES } from '../client/mcp-protocol';
import { launchResult, toolResult, type ApiError, type OperationAnswer, type OperationCall, type ToolCaller } from './results';

/** How often a client should ask `tasks/get`, in milliseconds. */
export const TASK_POLL_INTERVAL_MS = 1_000;

const REFUSED = 'refused';

/** The parts of a task ID. */
type TaskRef = { campaignId: string; attemptId: string } | { campaignId: string; refused: CallToolResult };

/** Reads a task ID; `undefined` when it is not one of ours. */
function parseTaskId(taskId: string): TaskRef | undefined {
  const [campaignId, second, third, ...rest] = taskId.split('/');
  if (!campaignId || !second || rest.length) return undefined;
  if (second !== REFUSED) return third === undefined ? { campaignId, attemptId: second } : undefined;
  try {
    return { campaignId, refused: JSON.parse(Buffer.from(third ?? '', 'base64url').toString('utf8')) as CallToolResult };
  } catch {
    return undefined;
  }
}

const notFound = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);

/** A task as the extension shows it. */
function task(taskId: string, status: Task['status'], statusMessage: string, createdAt: string): Task {
  return {
    taskId,
    status,
    statusMessage,
    createdAt,
    lastUpdatedAt: new Date().toISOString(),
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** The figures of the results page the task reads (docs/results.md). */
interface ResultsHead {
  attemptId: string;
  status: 'enriching' | 'enriched';
  eligible: number;
  processed: number;
}

const progress = (head: ResultsHead) => `${head.processed} of ${head.eligible} eligible accounts processed`;

/** The campaign fields the task reads. */
interface CampaignState {
  id: string;
  status: string;
  createdAt: string;
  lastEnrichment: { status: 'failed' | 'canceled'; startedAt: string } | null;
}

const dataOf = <T>(answer: OperationAnswer): T | undefined => (answer.body.error ? undefined : (answer.body.data as T));

/**
 * The task of a launch: its ID and state, read through the operations.
 * @throws McpError (invalid params) when the campaign or the attempt cannot be read with this key.
 */
async function readTask(call: ToolCaller, base: OperationCall, taskId: string): Promise<Task> {
  const ref = parseTaskId(taskId);
  if (!ref) throw notFound(taskId);
  const campaign = dataOf<CampaignState>(await call(TOOL_NAMES.get, { campaignId: ref.campaignId }, base));
  if (!campaign) throw notFound(taskId);
  if ('refused' in ref) {
    const error = ref.refused.structuredContent as ApiError | undefined;
    return task(taskId, 'failed', `Not launched, nothing charged: ${error?.message ?? 'refused'}`, campaign.createdAt);
  }
  const answer = await call(TOOL_NAMES.results, { campaignId: ref.campaignId, limit: 1 }, base);
  const head = dataOf<ResultsHead>(answer);
  if (head && head.attemptId === ref.attemptId) {
    return head.status === 'enriched'
      ? task(taskId, 'completed', `Enriched: ${progress(head)}`, campaign.createdAt)
      : task(taskId, 'working', `Enriching: ${progress(head)}`, campaign.createdAt);
  }
  if (answer.body.error?.code === 'results_expired')
    return task(taskId, 'completed', 'Enriched; the results have expired', campaign.createdAt);
  // The attempt is no longer the campaign's current one: it ended, canceled or failed (docs/launch.md).
  const ended = campaign.lastEnrichment;
  if (ended?.status === 'canceled') return task(taskId, 'cancelled', 'Canceled: the charge was refunded', campaign.createdAt);
  return task(
    taskId,
    'failed',
    ended ? 'The enrichment failed: the charge was refunded' : `Attempt ${ref.attemptId} is not the campaign's`,
    campaign.createdAt,
  );
}

/**
 * The `tools/call` of `enrich_campaign` with `task`: the launch (bound to the accepted charge when given), then
 * the task of its attempt. A refused launch is a task already `failed`, carrying the refusal.
 */
export async function enrichAsTask(call: ToolCaller, args: Record<string, unknown>, launch: OperationCall): Promise<CreateTaskResult> {
  const base: OperationCall = launch.authorization ? { authorization: launch.authorization } : {};
  const campaignId = String(args.campaignId ?? '');
  const launched = launchResult(await call(TOOL_NAMES.enrich, args, launch), launch);
  const now = new Date().toISOString();
  if (launched.isError) {
    const taskId = `${campaignId}/${REFUSED}/${Buffer.from(JSON.stringify(launched)).toString('base64url')}`;
    const error = launched.structuredContent as unknown as ApiError;
    return { task: task(taskId, 'failed', `Not launched, nothing charged: ${error.message}`, now) };
  }
  const head = dataOf<ResultsHead>(await call(TOOL_NAMES.results, { campaignId, limit: 1 }, base));
  if (!head)
    throw new McpError(
      ErrorCode.InternalError,
      `Campaign ${campaignId} was launched but its attempt could not be read; follow it with get_campaign.`,
    );
  return { task: await readTask(call, base, `${campaignId}/${head.attemptId}`) };
}

/**
 * The SDK's task store over the campaigns (see the module): `tasks/get`,
 * `tasks/result` and `tasks/cancel` read and act through the operations with
 * the request's key. Tasks are not listed (the capability leaves
 * `tasks/list` out): `list_campaigns` lists the campaigns.
 */
export function campaignTaskStore(call: ToolCaller, base: OperationCall): TaskStore {
  return {
    async createTask() {
      throw new McpError(ErrorCode.InvalidRequest, 'Only enrich_campaign runs as a task.');
    },
    getTask: (taskId) => readTask(call, base, taskId),
    async storeTaskResult() {
      // Nothing to store: a task's result is its campaign.
    },
    async getTaskResult(taskId): Promise<Result> {
      const ref = parseTaskId(taskId);
      if (!ref) throw notFound(taskId);
      if ('refused' in ref) return ref.refused;
      return toolResult(await call(TOOL_NAMES.get, { campaignId: ref.campaignId }, base));
    },
    async updateTaskStatus(taskId, status) {
      // The SDK's tasks/cancel asks for `cancelled`: cancel the campaign (exact refund). No other status is set from outside.
      if (status !== 'cancelled') return;
      const ref = parseTaskId(taskId);
      if (!ref || 'refused' in ref) throw notFound(taskId);
      const answer = await call(TOOL_NAMES.cancel, { campaignId: ref.campaignId }, base);
      if (answer.body.error)
        throw new McpError(ErrorCode.InvalidRequest, `${answer.body.error.code}: ${answer.body.error.message}`, answer.body.error);
    },
    async listTasks() {
      throw new McpError(ErrorCode.MethodNotFound, 'tasks/list is not supported: list_campaigns lists the campaigns.');
    },
  };
}
