/**
 * A local Step Functions endpoint: the AWS JSON 1.0 actions the service uses
 * (StartExecution, StopExecution, DescribeExecution, and ListExecutions for
 * tests that count what a restart started), backed by
 * aws-local-stepfunctions running the state machine CDK renders
 * (infra/workflow.ts). Task states call the task handlers in-process, with
 * the same input and output Lambda would see.
 *
 * The handlers reach it through the real SFN client (`SFN_ENDPOINT`), exactly
 * as they reach Step Functions on AWS.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StateMachine } from 'aws-local-stepfunctions';
import { renderEnrichmentDefinition, WORKFLOW_TASKS, type WorkflowTask } from '../workflow';
import { invokeLocally, lambdaContext } from './lambda-context';

/** ARN of the local state machine. */
export const LOCAL_STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:campaign-enrichment-local';

type Status = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

interface Execution {
  executionArn: string;
  name: string;
  input: string;
  status: Status;
  startDate: Date;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  abort: () => void;
  done: Promise<void>;
  /** Names of the states entered so far, in order (a Map state's iterations included). */
  entered: string[];
  /** Task handlers of this execution still running (a stopped execution's tasks run on until they return, as Lambda invocations do). */
  tasks: Set<Promise<unknown>>;
}

/** The local endpoint: an HTTP request handler and the executions it runs. */
export interface LocalStepFunctions {
  /** Handles one SFN API request (`x-amz-target: AWSStepFunctions.*`). */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  /** Waits for every running execution to end (tests). */
  settle(): Promise<void>;
  /** Names of the states an execution has entered so far, in order; empty for an unknown execution (tests wait on it instead of sleeping). */
  enteredStates(executionArn: string): readonly string[];
  /**
   * Resolves once no task handler of the execution is running (tests: a
   * stopped execution's task that was held returns, and what it does is done).
   * Never for an execution waiting in ExpireResults (it waits for the expiry).
   */
  tasksSettled(executionArn: string): Promise<void>;
  /** Aborts every running execution (shutdown). */
  abortAll(): void;
}

class SfnError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');
/** Longest delay a Node timer honours (ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves at `timestamp`, however far away; the timers do not keep the process alive. */
async function sleepUntil(timestamp: string): Promise<void> {
  for (let left = Date.parse(timestamp) - Date.now(); left > 0; left = Date.parse(timestamp) - Date.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, MAX_TIMER_MS)).unref());
  }
}

/** Builds the local endpoint; task handlers are imported from their function files. */
export async function createLocalStepFunctions(): Promise<LocalStepFunctions> {
  const definition = renderEnrichmentDefinition();
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const key of Object.keys(WORKFLOW_TASKS) as WorkflowTask[]) {
    const task = WORKFLOW_TASKS[key];
    const module = (await import(pathToFileURL(path.join(PROJECT_ROOT, task.entry)).href)) as {
      handler: (input: unknown, context: unknown) => Promise<unknown>;
    };
    const invoke = (input: unknown) => invokeLocally(module.handler, input, lambdaContext(task.functionId, randomUUID(), 900_000));
    // aws-local-stepfunctions waits with one Node timer, which fires at once past
    // ~24.8 days (2^31 ms); the expiry wait is therefore done here, in chunks,
    // and the Wait state itself is overridden to 0 (see run below).
    handlers[task.state] =
      key === 'expire'
        ? async (input) => (await sleepUntil((input as { resultsExpireAt: string }).resultsExpireAt), invoke(input))
        : invoke;
  }
  const executions = new Map<string, Execution>();

  const start = (request: { stateMachineArn?: string; name?: string; input?: string }) => {
    if (request.stateMachineArn !== LOCAL_STATE_MACHINE_ARN)
      throw new SfnError('StateMachineDoesNotExist', `State machine does not exist: ${request.stateMachineArn}`);
    const name = request.name ?? randomUUID();
    const executionArn = `${LOCAL_STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:')}:${name}`;
    const input = request.input ?? '{}';
    const existing = executions.get(executionArn);
    if (existing) {
      if (existing.input !== input) throw new SfnError('ExecutionAlreadyExists', `Execution already exists: ${executionArn}`);
      return existing;
    }
    const startDate = new Date();
    // Each invocation is tracked until it returns, so a test can wait for a stopped execution's last task.
    const tasks = new Set<Promise<unknown>>();
    const tracked = Object.fromEntries(
      Object.entries(handlers).map(([state, handler]) => [
        state,
        (taskInput: unknown) => {
          const invocation = handler(taskInput);
          tasks.add(invocation);
          invocation.then(
            () => tasks.delete(invocation),
            () => tasks.delete(invocation),
          );
          return invocation;
        },
      ]),
    );
    const run = machine.run(JSON.parse(input), {
      overrides: { taskResourceLocalHandlers: tracked as never, waitTimeOverrides: { WaitForResultsExpiry: 0 } },
      noThrowOnAbort: true,
      context: { Execution: { Id: executionArn, Name: name, Input: JSON.parse(input), StartTime: startDate.toISOString() } } as never,
    });
    const execution: Execution = {
      executionArn,
      name,
      input,
      status: 'RUNNING',
      startDate,
      abort: run.abort,
      entered: [],
      tasks,
      done: run.result.then(
        (output) => {
          if (execution.status === 'RUNNING') {
            execution.status = 'SUCCEEDED';
            execution.output = JSON.stringify(output);
          }
          execution.stopDate ??= new Date();
        },
        (error: Error & { cause?: unknown }) => {
          execution.status = 'FAILED';
          execution.error = error.name;
          execution.cause = error.message;
          execution.stopDate = new Date();
        },
      ),
    };
    executions.set(executionArn, execution);
    void (async () => {
      for await (const event of run.eventLogs) if (event.type === 'StateEntered') execution.entered.push(event.state.name);
    })().catch(() => undefined);
    return execution;
  };

  const actions: Record<string, (request: Record<string, unknown>) => unknown> = {
    StartExecution: (request) => {
      const execution = start(request);
      return { executionArn: execution.executionArn, startDate: execution.startDate.getTime() / 1000 };
    },
    StopExecution: (request) => {
      const execution = executions.get(String(request.executionArn));
      if (!execution) throw new SfnError('ExecutionDoesNotExist', `Execution does not exist: ${String(request.executionArn)}`);
      if (execution.status === 'RUNNING') {
        execution.status = 'ABORTED';
        execution.stopDate = new Date();
        execution.error = typeof request.error === 'string' ? request.error : undefined;
        execution.cause = typeof request.cause === 'string' ? request.cause : undefined;
        execution.abort();
      }
      return { stopDate: (execution.stopDate ?? new Date()).getTime() / 1000 };
    },
    // Every execution this process started (one page; `statusFilter` honoured): tests count the workflows a restart started.
    ListExecutions: (request) => {
      if (request.stateMachineArn !== LOCAL_STATE_MACHINE_ARN)
        throw new SfnError('StateMachineDoesNotExist', `State machine does not exist: ${String(request.stateMachineArn)}`);
      return {
        executions: [...executions.values()]
          .filter((execution) => request.statusFilter === undefined || execution.status === request.statusFilter)
          .map((execution) => ({
            executionArn: execution.executionArn,
            stateMachineArn: LOCAL_STATE_MACHINE_ARN,
            name: execution.name,
            status: execution.status,
            startDate: execution.startDate.getTime() / 1000,
            ...(execution.stopDate ? { stopDate: execution.stopDate.getTime() / 1000 } : {}),
          })),
      };
    },
    DescribeExecution: (request) => {
      const execution = executions.get(String(request.executionArn));
      if (!execution) throw new SfnError('ExecutionDoesNotExist', `Execution does not exist: ${String(request.executionArn)}`);
      return {
        executionArn: execution.executionArn,
        stateMachineArn: LOCAL_STATE_MACHINE_ARN,
        name: execution.name,
        status: execution.status,
        startDate: execution.startDate.getTime() / 1000,
        ...(execution.stopDate ? { stopDate: execution.stopDate.getTime() / 1000 } : {}),
        input: execution.input,
        ...(execution.output ? { output: execution.output } : {}),
        ...(execution.error ? { error: execution.error } : {}),
        ...(execution.cause ? { cause: execution.cause } : {}),
      };
    },
  };

  return {
    async handle(req, res, body) {
      const action = String(req.headers['x-amz-target'] ?? '').replace(/^AWSStepFunctions\./, '');
      const reply = (status: number, payload: unknown, errorType?: string) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
        res.end(JSON.stringify(payload));
      };
      const handler = actions[action];
      if (!handler)
        return reply(400, { __type: 'UnknownOperationException', message: `Unsupported action ${action}` }, 'UnknownOperationException');
      try {
        reply(200, handler(JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>));
      } catch (error) {
        if (error instanceof SfnError) return reply(400, { __type: error.type, message: error.message }, error.type);
        throw error;
      }
    },
    enteredStates(executionArn) {
      return executions.get(executionArn)?.entered ?? [];
    },
    async tasksSettled(executionArn) {
      const tasks = executions.get(executionArn)?.tasks;
      while (tasks && tasks.size > 0) await Promise.allSettled([...tasks]);
    },
    async settle() {
      await Promise.all([...executions.values()].filter((e) => e.status === 'RUNNING').map((e) => e.done));
    },
    abortAll() {
      for (const execution of executions.values()) if (execution.status === 'RUNNING') execution.abort();
    },
  };
}
