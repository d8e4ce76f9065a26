/**
 * The enrichment workflow port: starting and stopping executions of the
 * state machine (infra/workflow.ts), and the shapes its tasks exchange.
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  StartExecutionCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';

/** Accounts per Map iteration of the workflow. */
export const ENRICHMENT_BATCH_SIZE = 1_000;

/** A slice of the eligible list: `count` IDs from `offset`. */
export interface BatchRef {
  index: number;
  offset: number;
  count: number;
}

/** Input of an execution (and of every task, plus its own fields). */
export interface EnrichmentExecutionInput {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  eligibleObjectKey: string;
  batches: BatchRef[];
  /** Request ID of the enrich call that launched the attempt (null for attempts launched before it was recorded); every task logs it. */
  requestId: string | null;
}

/** What a find-contacts batch found (accounts and contacts). */
export interface BatchSummary {
  index: number;
  accounts: number;
  accountsWithContact: number;
  accountsWithMobile: number;
  contacts: number;
}

/** Starts and stops enrichment executions. */
export interface WorkflowPort {
  /** Starts the execution named `attemptId`; starting the same attempt again is a no-op. @returns the execution ARN. */
  start(input: EnrichmentExecutionInput): Promise<string>;
  /** Stops an execution (a canceled attempt). */
  stop(executionArn: string, cause: string): Promise<void>;
  /** The ARN an attempt's execution has (deterministic: execution name = attempt ID). */
  executionArnOf(attemptId: string): string;
  /** Where an execution is: Step Functions' status, or `MISSING` when it was never started (or, locally, lost with a restart). */
  status(executionArn: string): Promise<ExecutionStatus>;
}

/** Status of an execution. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE' | 'MISSING';

/** The execution input of an attempt: deterministic, so starting it again is recognized as the same execution. */
export function executionInputOf(
  campaign: { organizationId: string; id: string },
  attempt: { id: string; eligibleObjectKey: string; eligible: number; requestId?: string },
): EnrichmentExecutionInput {
  return {
    organizationId: campaign.organizationId,
    campaignId: campaign.id,
    attemptId: attempt.id,
    eligibleObjectKey: attempt.eligibleObjectKey,
    batches: batchesOf(attempt.eligible),
    requestId: attempt.requestId ?? null,
  };
}

/** Splits `count` eligible accounts into batches of {@link ENRICHMENT_BATCH_SIZE}. */
export function batchesOf(count: number, size = ENRICHMENT_BATCH_SIZE): BatchRef[] {
  const batches: BatchRef[] = [];
  for (let offset = 0, index = 0; offset < count; offset += size, index++)
    batches.push({ index, offset, count: Math.min(size, count - offset) });
  return batches;
}

/** Builds the Step Functions implementation of {@link WorkflowPort}. */
export function createStepFunctionsWorkflow({ client, stateMachineArn }: { client: SFNClient; stateMachineArn: string }): WorkflowPort {
  const executionArnOf = (attemptId: string) => `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${attemptId}`;
  return {
    executionArnOf,
    async start(input) {
      try {
        const { executionArn } = await client.send(
          new StartExecutionCommand({ stateMachineArn, name: input.attemptId, input: JSON.stringify(input) }),
        );
        return executionArn ?? executionArnOf(input.attemptId);
      } catch (error) {
        if (error instanceof ExecutionAlreadyExists) return executionArnOf(input.attemptId);
        throw error;
      }
    },
    async stop(executionArn, cause) {
      await client.send(new StopExecutionCommand({ executionArn, cause, error: 'Canceled' }));
    },
    async status(executionArn) {
      try {
        const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
        return (status ?? 'RUNNING') as ExecutionStatus;
      } catch (error) {
        if (error instanceof ExecutionDoesNotExist) return 'MISSING';
        throw error;
      }
    },
  };
}
