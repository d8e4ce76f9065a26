/**
 * Operator CLI (README.md#operator-cli): `npx ops <command>` (bin/ops.mjs), or
 * `npm run -s ops -- <command>`. `npx ops --help` lists the commands,
 * `npx ops COMMAND --help` a command's options; the program is in
 * infra/ops/program.ts, the commands in infra/ops/commands/.
 *
 * With no target options it works against the running local stack (it reads
 * `<data folder>/endpoints.json`, written by `npm start`). Against a deployed
 * stack, pass `--table NAME --bucket NAME` (or set TABLE_NAME and
 * BUCKET_NAME) and the usual AWS credentials. Prints one JSON object on
 * stdout; on failure prints a message on stderr and exits non-zero.
 */
import { COMMANDS } from './ops/commands';
import { runOps } from './ops/program';

process.exitCode = await runOps(process.argv.slice(2), COMMANDS);
