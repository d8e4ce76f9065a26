/**
 * A child process for test/local-emulators.test.ts: starts s3rver in the
 * folder given as argument, prints `READY <s3rver pid> <endpoint>` and waits
 * to be killed.
 */
import { startS3Local } from '../../infra/local/emulators';

const running = await startS3Local({ dataDir: process.argv[2]!, buckets: ['held'] });
console.log(`READY ${running.pid} ${running.endpoint}`);
setInterval(() => undefined, 60_000);
