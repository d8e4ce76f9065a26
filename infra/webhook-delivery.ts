/**
 * The webhook delivery state machine (docs/webhooks.md): one Standard execution
 * per message, started by the stream dispatcher (functions/webhooks-dispatch.ts)
 * and named after the message. AWS drives every retry; no process waits.
 *
 *   Deliver (one attempt; returns done and waitSeconds)
 *   → Finished? — done → Delivered
 *               — else → WaitForRetry (waitSeconds: the backoff with jitter
 *                        the task computed) → Deliver
 *
 * The schedule (lib/webhooks/schedule.ts) ends within 33 hours; the
 * execution's timeout leaves room for Lambda retries on top.
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { TRANSIENT_ERRORS } from './workflow';

/** Properties of {@link WebhookDelivery}. */
export interface WebhookDeliveryProps {
  /** The task function (functions/webhooks-deliver.ts). */
  deliverFunction: lambda.IFunction;
  /** Execution log group (level ALL; execution data is only organization and message IDs and the attempt's outcome). */
  logGroup: logs.ILogGroup;
  tracing?: boolean;
}

/** Longest life of a delivery execution. */
export const DELIVERY_EXECUTION_TIMEOUT = Duration.days(3);

/** The delivery state machine. */
export class WebhookDelivery extends Construct {
  readonly stateMachine: sfn.StateMachine;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const deliver = new tasks.LambdaInvoke(this, 'Deliver', {
      lambdaFunction: props.deliverFunction,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    }).addRetry({
      errors: TRANSIENT_ERRORS,
      interval: Duration.seconds(2),
      maxAttempts: 6,
      backoffRate: 2,
      jitterStrategy: sfn.JitterType.FULL,
    });
    const wait = new sfn.Wait(this, 'WaitForRetry', { time: sfn.WaitTime.secondsPath('$.waitSeconds') });
    const finished = new sfn.Choice(this, 'Finished?')
      .when(
        sfn.Condition.booleanEquals('$.done', true),
        new sfn.Succeed(this, 'Delivered', { comment: 'Delivered, or given up (see the delivery log)' }),
      )
      .otherwise(wait.next(deliver));
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(deliver.next(finished)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      timeout: DELIVERY_EXECUTION_TIMEOUT,
      tracingEnabled: props.tracing ?? false,
      logs: { destination: props.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
    });
  }
}
