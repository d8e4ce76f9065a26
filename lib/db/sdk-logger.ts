/**
 * The SDK's per-call logger middleware, left out of one command (docs/architecture.md "Hot reads").
 *
 * Every SDK call runs the logger middleware, which filters the command's whole input and output through the
 * operation's schema (its sensitive-data filter) whether or not a logger is set; our clients set none
 * (lib/aws.ts), so the walk logs nothing. Measured against DynamoDB Local (bench `latency`): about 0.09 ms of
 * a 25-item Query and 0.05 ms of a 2-key BatchGetItem, the cost growing with the items answered.
 */

/** A command whose middleware stack a middleware may be added to (every SDK command, low-level or DocumentClient). */
interface WithMiddlewareStack {
  middlewareStack: {
    add(middleware: (next: (args: never) => unknown) => (args: never) => unknown, options: Record<string, unknown>): void;
  };
}

/**
 * Replaces the SDK's `loggerMiddleware` of this one command with a pass-through: every other middleware
 * (retries, signing, endpoint, the DocumentClient's marshalling, counters added to the client) still runs. Only
 * for a client without a logger, as ours are (lib/aws.ts): a logger set on the client would not see the call.
 * @param command - the command, before it is sent.
 * @returns the same command.
 */
export function withoutSdkLogger<C extends WithMiddlewareStack>(command: C): C {
  command.middlewareStack.add((next) => (args) => next(args), { step: 'initialize', name: 'loggerMiddleware', override: true });
  return command;
}
