/**
 * Stand-in for `@smithy/core/event-streams` inside the Lambda bundles (an
 * esbuild `alias` in infra/constructs/service-function.ts). No operation this
 * service calls streams events (DynamoDB, Step Functions and the S3 object
 * operations; S3's only event-stream operation is SelectObjectContent), yet
 * every client pulls in the event-stream codec: the S3 client's configuration
 * imports its marshaller, and every protocol loads it through a dynamic
 * import that esbuild inlines (about 15 KB of minified code per bundle).
 *
 * This module keeps the names the clients import, with the same
 * configuration step; anything that would actually encode or decode an event
 * stream throws, naming this file. Only the bundles use it; the sources (local
 * stack, tests) keep the real module. test/infra/bundle.test.ts runs
 * DynamoDB, S3 and workflow bundles built with it.
 */

/** Thrown by every event-stream operation of a bundle. */
const unsupported = (): never => {
  throw new Error('Event streams are not bundled in this function (lib/lambda/no-event-streams.ts)');
};

/** The marshaller the S3 client's configuration asks for at construction: never used, it throws if it is. */
export const eventStreamSerdeProvider = (_options: unknown): { serialize: () => never; deserialize: () => never } => ({
  serialize: unsupported,
  deserialize: unsupported,
});

/** As `@smithy/core/event-streams`: the client's `eventStreamMarshaller` from its provider (S3Client's constructor runs it). */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (input: T) => unknown }>(
  input: T,
): T & { eventStreamMarshaller: unknown } => Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });

/** What a protocol builds to (de)serialize an event stream: throws (no operation of this service has one). */
export class EventStreamSerde {
  constructor(_options: unknown) {
    unsupported();
  }
}
