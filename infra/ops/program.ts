/**
 * The operator CLI's program (decisions §8), built on commander: one
 * subcommand per {@link OpsCommand}, help per command, unknown commands and
 * options refused, one JSON object on stdout, messages on stderr, and the
 * exit codes below.
 */
import { Command, CommanderError } from 'commander';
import { ImportFileError } from '../../lib/warehouse/import';
import { FailedWithResult, UsageError, type OpsCommand } from './command';
import { createProgress } from './progress';
import { addTargetOptions, applyTarget, type TargetOptions } from './target';

/** Exit codes of the CLI (README "Operator CLI"). */
export const EXIT = {
  /** Done; stdout has the result (or help was asked for). */
  ok: 0,
  /** The command failed (no such organization or key, no running stack, AWS error); message on stderr. */
  failed: 1,
  /** Usage: unknown command or option, a missing or malformed option value; nothing was run. */
  usage: 2,
  /** The input file has a bad line (named on stderr); nothing was written. */
  invalidFile: 3,
} as const;

const EXIT_CODES_HELP = `
Exit codes:
  0  done; stdout has one JSON object
  1  the command failed (e.g. no such organization, no running local stack); message on stderr
  2  usage error (unknown command or option, missing or malformed value); nothing was run
  3  the input file has a bad line, named on stderr; nothing was written

Target: the running local stack (npm start) by default; a deployed stack with
--table NAME --bucket NAME [--state-machine ARN] and AWS credentials.`;

/** Where the program writes; the process's streams unless a test gives others. */
export interface OpsOutput {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stderr stream for progress bars (drawn only if it is a TTY). */
  progressStream?: NodeJS.WriteStream;
}

const processOutput: OpsOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  progressStream: process.stderr,
};

/**
 * Builds the program: each command registered with its options, the target
 * options, its own help, and an action that prints the result as JSON.
 */
export function buildProgram(commands: readonly OpsCommand<any>[], output: OpsOutput = processOutput): Command {
  const program = new Command('ops')
    .description('Operator CLI of the Campaign Enrichment API: organizations, credits, keys, imports (decisions §8).')
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err })
    .showSuggestionAfterError(true)
    .helpCommand('help [command]', 'help for a command')
    .addHelpText('after', EXIT_CODES_HELP);

  for (const definition of commands) {
    const command = program.command(definition.name).description(definition.summary).showHelpAfterError(`(run "ops ${definition.name} --help" for its options)`);
    definition.configure?.(command);
    addTargetOptions(command);
    if (definition.details) command.addHelpText('after', `\n${definition.details}`);
    command.action(async () => {
      const options = command.opts<TargetOptions>();
      applyTarget(options);
      const result = await definition.run({ options, args: command.processedArgs as string[], progress: createProgress(output.progressStream) });
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
export async function runOps(argv: readonly string[], commands: readonly OpsCommand<any>[], output: OpsOutput = processOutput): Promise<number> {
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
    output.err(`error: ${messageOf(error)}\n`);
    if (error instanceof UsageError) return EXIT.usage;
    if (error instanceof ImportFileError) return EXIT.invalidFile;
    return EXIT.failed;
  }
}
