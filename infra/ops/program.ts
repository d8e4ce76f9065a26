/**
 * The operator CLI's program (README.md#operator-cli), built on commander: one
 * subcommand per {@link OpsCommand}, help per command, unknown commands and
 * options refused, one JSON object on stdout, messages on stderr, and the
 * exit codes below.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Command, CommanderError } from 'commander';
import { ImportFileError } from '../../lib/warehouse/import';
import { cannotRead, FailedWithResult, UsageError, type OpsCommand } from './command';
import { createProgress } from './progress';
import { addTargetOptions, applyTarget, type TargetOptions } from './target';

/** Exit codes of the CLI (README "Operator CLI"). */
export const EXIT = {
  /** Done; stdout has the result (or help was asked for). */
  ok: 0,
  /** The command failed (no such organization or key, no running stack, AWS error); message on stderr. */
  failed: 1,
  /** Usage: unknown command or option, a missing or malformed option value, a file that cannot be read, an unconfirmed command that cannot be undone; nothing was run. */
  usage: 2,
  /** The input file has bad lines (named on stderr, up to 20); nothing was written. */
  invalidFile: 3,
} as const;

const EXIT_CODES_HELP = `
Exit codes:
  0  done; stdout has one JSON object
  1  the command failed (e.g. no such organization, no running local stack); message on stderr
  2  usage error (unknown command or option, missing or malformed value, a file that cannot be read,
     a command that cannot be undone run without --yes and without a terminal); nothing was run
  3  the input file has bad lines, named on stderr; nothing was written

Target: the running local stack (npm start) by default; a deployed stack with
--table NAME --bucket NAME [--state-machine ARN] and AWS credentials.`;

/** Where the program writes; the process's streams unless a test gives others. */
export interface OpsOutput {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stderr stream for progress bars (drawn only if it is a TTY). */
  progressStream?: NodeJS.WriteStream;
  /** Asks a yes/no question on a terminal (a command that cannot be undone, without --yes); absent: no terminal to ask on. */
  ask?: (question: string) => Promise<boolean>;
}

/** A y/N question on the terminal: true only for "y" or "yes". */
async function askOnTerminal(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(`${question} [y/N] `)).trim());
  } finally {
    terminal.close();
  }
}

const processOutput: OpsOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  progressStream: process.stderr,
  ...(process.stdin.isTTY && process.stderr.isTTY ? { ask: askOnTerminal } : {}),
};

/** The project's version (package.json), printed by `--version`. */
const VERSION = (JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;

/**
 * Runs a command that cannot be undone only once confirmed: `--yes`, or "y" at the terminal's prompt.
 * @throws UsageError when neither (no terminal to ask on, or the answer was not yes).
 */
async function confirmed(definition: OpsCommand<any>, options: Record<string, unknown>, output: OpsOutput): Promise<void> {
  if (!definition.confirm || options.yes) return;
  const question = definition.confirm(options);
  if (!output.ask)
    throw new UsageError(`${definition.name} cannot be undone and there is no terminal to ask on: ${question} Add --yes to confirm.`);
  if (!(await output.ask(question))) throw new UsageError(`${definition.name}: not confirmed; nothing was done.`);
}

/**
 * Builds the program: each command registered with its options, the target
 * options, its own help, and an action that prints the result as JSON.
 */
export function buildProgram(commands: readonly OpsCommand<any>[], output: OpsOutput = processOutput): Command {
  const program = new Command('ops')
    .description('Operator CLI of the Campaign Enrichment API: organizations, credits, keys, imports (README.md#operator-cli).')
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showSuggestionAfterError(true)
    .helpCommand('help [command]', 'help for a command')
    .version(VERSION, '-V, --version', 'print the version')
    .addHelpText('after', EXIT_CODES_HELP);

  for (const definition of commands) {
    const command = program
      .command(definition.name)
      .description(definition.summary)
      .showHelpAfterError(`(run "ops ${definition.name} --help" for its options)`);
    definition.configure?.(command);
    if (definition.confirm)
      command.option('-y, --yes', 'do it without asking (it cannot be undone; needed when there is no terminal to ask on)');
    addTargetOptions(command);
    if (definition.details) command.addHelpText('after', `\n${definition.details}`);
    command.addHelpText('after', `\nExamples:\n${definition.examples.map((example) => `  ${example}`).join('\n')}`);
    command.action(async () => {
      const options = command.opts<TargetOptions>();
      await confirmed(definition, options as unknown as Record<string, unknown>, output);
      applyTarget(options);
      const result = await definition.run({
        options,
        args: command.processedArgs as string[],
        progress: createProgress(output.progressStream),
      });
      output.out(`${JSON.stringify(result)}\n`);
    });
  }
  return program;
}

/** The message of an error for stderr: its own message, never a stack trace. */
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Runs the CLI on `argv` (the arguments after the script).
 * @returns the exit code ({@link EXIT}).
 */
export async function runOps(
  argv: readonly string[],
  commands: readonly OpsCommand<any>[],
  output: OpsOutput = processOutput,
): Promise<number> {
  const program = buildProgram(commands, output);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already written its message (or the help) to the right stream.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof FailedWithResult) output.out(`${JSON.stringify(error.result)}\n`);
    const fileError = cannotRead(error);
    output.err(`error: ${fileError ?? messageOf(error)}\n`);
    if (error instanceof UsageError || fileError) return EXIT.usage;
    if (error instanceof ImportFileError) return EXIT.invalidFile;
    return EXIT.failed;
  }
}
