/**
 * The shape of one operator CLI command (README.md#operator-cli) and the helpers its
 * options share. Each command is one {@link OpsCommand} value: its name,
 * summary, options (declared on commander's own `Command`), and a `run`
 * that returns the one JSON object the CLI prints. infra/ops/commands/index.ts
 * lists them; infra/ops/program.ts registers each on the program.
 *
 * @example
 * export const keyCreate = defineCommand<{ org: string }>({
 *   name: 'key:create',
 *   summary: 'another API key for an organization',
 *   examples: ['npx ops key:create --org org_…'],
 *   configure: (command) => command.requiredOption('--org <id>', 'organization ID'),
 *   run: async ({ options }) => ({ apiKey: await (await stores()).apiKeys().create(options.org) }),
 * });
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';

/** What a command's `run` receives. */
export interface CommandInput<Options> {
  /** Parsed option values (commander's `opts()`, keys in camelCase). */
  options: Options;
  /** Positional arguments, in the order the command declares them. */
  args: string[];
  /** Progress reporting on stderr (a no-op unless stderr is a terminal). */
  progress: ProgressReporter;
}

/** A progress bar on stderr; every method is a no-op when stderr is not a terminal. */
export interface ProgressReporter {
  /** Starts (or restarts) a bar: `label` before it, `total` units of `unit`. */
  start(label: string, total: number, unit: string): void;
  /** Moves the bar to `done` units. */
  update(done: number): void;
  /** Ends the bar (leaves it drawn, then a new line). */
  stop(): void;
}

/** One CLI command. */
export interface OpsCommand<Options = Record<string, unknown>> {
  /** `group:verb`, as typed on the command line. */
  name: string;
  /** One line for the command list of `--help`. */
  summary: string;
  /** Longer text after the options in `COMMAND --help` (file formats). */
  details?: string;
  /** Command lines shown under "Examples:" in `COMMAND --help` (at least one). */
  examples: readonly [string, ...string[]];
  /**
   * For a command that cannot be undone: what it is about to do, as a
   * question ("Revoke the API key cek_…?"). The command then runs only with
   * `--yes`, or after a "y" at the prompt when stdin and stderr are a
   * terminal; otherwise it stops with a usage error (exit 2) saying so.
   */
  confirm?: (options: Options) => string;
  /** Declares positional arguments and options on commander's command. */
  configure?: (command: Command) => Command;
  /** Runs the command; the result is printed as one JSON object on stdout. */
  run: (input: CommandInput<Options>) => Promise<Record<string, unknown>>;
}

/** Declares a command; `Options` is the shape of its parsed options. */
export const defineCommand = <Options>(command: OpsCommand<Options>): OpsCommand<Options> => command;

/**
 * An option-argument parser for whole numbers, for commander's `.option(flags, description, parser)`.
 * @param min - smallest accepted value (default 0; `-Infinity` for any integer).
 * @throws InvalidArgumentError (commander reports it as a usage error naming the option).
 */
export const integer =
  (min = 0) =>
  (raw: string): number => {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isSafeInteger(value)) throw new InvalidArgumentError('must be a whole number.');
    if (value < min) throw new InvalidArgumentError(`must be ${min} or more.`);
    return value;
  };

/** What {@link integerOrNone} answers for `none`: the setting removed. */
export const NONE = 'none' as const;

/**
 * An option-argument parser for a whole number or `none` ({@link NONE}: the setting removed), for commander.
 * It never answers `null` or `undefined`: commander stores `""` for a parser's `null`, which would reach the store as a
 * value instead of a removal. {@link noneAsNull} turns the answer into the store's `number | null`.
 * @param min - smallest accepted number (default 0).
 * @throws InvalidArgumentError (commander reports it as a usage error naming the option).
 */
export const integerOrNone =
  (min = 0) =>
  (raw: string): number | typeof NONE =>
    raw.trim().toLowerCase() === NONE ? NONE : integer(min)(raw);

/** An {@link integerOrNone} option as the stores take it: a number, `null` for `none`, `undefined` when not given. */
export const noneAsNull = (value: number | typeof NONE | undefined): number | null | undefined => (value === NONE ? null : value);

/** A usage mistake found by a command itself (exit code 2, like commander's own). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command that ran but found a failure (e.g. `credits:reconcile` finding
 * drift): its result is still the one JSON object on stdout, the message
 * goes to stderr, and the exit code is 1.
 */
export class FailedWithResult extends Error {
  override name = 'FailedWithResult';
  constructor(
    message: string,
    readonly result: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Why a file cannot be read, in words, by the error code Node's fs gives. */
const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
};

/**
 * A file a command could not read, as one line (`cannot read FILE: no such file`);
 * undefined when `error` is not an fs error Node gives with a code this knows.
 */
export function cannotRead(error: unknown, file?: string): string | undefined {
  const { code, path: errorPath } = (error ?? {}) as { code?: unknown; path?: unknown };
  const named = file ?? (typeof errorPath === 'string' ? errorPath : undefined);
  return typeof code === 'string' && FILE_ERRORS[code] && named !== undefined ? `cannot read ${named}: ${FILE_ERRORS[code]}` : undefined;
}

/**
 * Checks that an input file can be read before a command starts on it.
 * @throws UsageError `cannot read FILE: no such file` (a folder, permission denied…).
 */
export async function readableFile(file: string): Promise<void> {
  try {
    if ((await stat(file)).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
    await access(file, constants.R_OK);
  } catch (error) {
    const message = cannotRead(error, file);
    throw message ? new UsageError(message) : error;
  }
}
