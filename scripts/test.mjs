/**
 * `npm test`: the type check (`tsc --noEmit -p .`) and every test (`vitest run`, with the arguments given after
 * `npm test --`), run at once rather than one after the other. Much of the suite's time is spent waiting on
 * workflows, DynamoDB Local and the processes the tests spawn, and the type check (about 20 CPU-s, one core)
 * fills that time instead of adding its own before the first test starts (issue #37's budget: the whole
 * command on a fresh clone). The exit code is vitest's, or the type check's when vitest passed and it failed;
 * its errors are printed as it finds them and named again at the end.
 */
import { spawn } from 'node:child_process';

const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.once('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
const [typecheck, tests] = await Promise.all([
  run(bin('tsc'), ['--noEmit', '-p', '.']),
  run(bin('vitest'), ['run', ...process.argv.slice(2)]),
]);
if (typecheck !== 0) console.error(`npm test: the type check (tsc --noEmit -p .) failed with exit code ${typecheck}`);
process.exit(tests !== 0 ? tests : typecheck);
