/**
 * A child process for test/local-emulators.test.ts: starts a persisted
 * DynamoDB Local in the folder given as argument, prints `READY <jvm pid>`
 * and waits to be killed.
 */
import { startDynamoDbLocal } from '../../infra/local/emulators';

const running = await startDynamoDbLocal({ dataDir: process.argv[2]! });
console.log(`READY ${running.pid} ${running.endpoint}`);
setInterval(() => undefined, 60_000);
