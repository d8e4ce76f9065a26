/**
 * A streaming operation's handler as Lambda runs it in AWS (docs/results.md
 * "The stream"; infra/stack.ts): behind a function URL in `RESPONSE_STREAM`
 * invoke mode, wrapped by the runtime's `awslambda.streamifyResponse`. The
 * function URL hands the function the same payload 2.0 event as the HTTP
 * API, so the pipeline (authentication, scopes, limits, request IDs, test
 * mode, the envelope) runs unchanged; its answer is written to the response
 * stream: the status and headers first (`HttpResponseStream.from`), then the
 * body, a string for a refusal, the streamed body for a success.
 *
 * Outside the Lambda runtime (the local stack, the tests, the bench) there
 * is no `awslambda.streamifyResponse`: the handler is returned as it is, and
 * the local server (infra/local/server.ts) pipes a streamed body itself.
 */
import type { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { logger } from '../observability';
import { isStreamingResult, type StreamingApiHandler } from './pipeline';
import { writeStreamingBody } from './stream';

/** The part of the Lambda runtime's global `awslambda` a streaming function uses (present only inside the Node.js runtime). */
interface LambdaStreamingRuntime {
  streamifyResponse(handler: (event: unknown, responseStream: Writable, context: Context) => Promise<void>): unknown;
  HttpResponseStream: { from(stream: Writable, prelude: { statusCode: number; headers?: Record<string, string> }): Writable };
}

/** The runtime's `awslambda`, when it offers response streaming. */
function streamingRuntime(): LambdaStreamingRuntime | undefined {
  const runtime = (globalThis as { awslambda?: Partial<LambdaStreamingRuntime> }).awslambda;
  return typeof runtime?.streamifyResponse === 'function' && runtime.HttpResponseStream ? (runtime as LambdaStreamingRuntime) : undefined;
}

/**
 * Wraps a streaming operation's handler for Lambda response streaming when
 * the runtime offers it; returns it unchanged otherwise.
 *
 * @returns the function's exported `handler`.
 */
export function streamifiedHandler(handler: StreamingApiHandler): StreamingApiHandler {
  const runtime = streamingRuntime();
  if (!runtime) return handler;
  return runtime.streamifyResponse(async (event, responseStream, context) => {
    const result = await handler(event as Parameters<StreamingApiHandler>[0], context);
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)]));
    const out = runtime.HttpResponseStream.from(responseStream, { statusCode: result.statusCode ?? 200, headers });
    if (!isStreamingResult(result)) {
      out.end(result.body ?? '');
      return;
    }
    try {
      // In the body's few chunk buffers, each reused once the response stream wrote it (lib/http/stream.ts).
      await writeStreamingBody(result, out);
    } catch (error) {
      // The reader went away (the client resumes from its last seq), or the stream broke after its first byte.
      logger.warn('The stream ended early', { error });
    }
  }) as StreamingApiHandler;
}
