/**
 * One stack per data folder (README.md#set-up): `npm start` claims its data
 * folder by writing {@link STACK_FILE} (its process ID and port) with an
 * exclusive create. A second start on a folder whose recorded process is
 * alive refuses with {@link DataFolderInUseError} and touches nothing there;
 * a folder whose recorded process is gone (a crash, `kill -9`) is claimed
 * again and reused.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The file that names the stack serving a data folder: `{pid, port, startedAt}` JSON. */
export const STACK_FILE = 'stack.json';

/** What {@link STACK_FILE} records: the stack's process ID, its API port and when it started (ISO 8601). */
export interface StackRecord {
  pid: number;
  port: number;
  startedAt: string;
}

/** Thrown by {@link claimDataFolder} when a live stack serves the folder; its message names that stack's process and port. */
export class DataFolderInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: StackRecord,
  ) {
    super(
      `The data folder ${dataDir} is in use by the local stack running as pid ${holder.pid} on http://127.0.0.1:${holder.port} (since ${holder.startedAt}). ` +
        `Stop that stack first (Ctrl+C in its terminal, or kill ${holder.pid}), or start this one on another folder (--data-dir or DATA_DIR).`,
    );
    this.name = 'DataFolderInUseError';
  }
}

/** A claimed data folder. */
export interface DataFolderClaim {
  /** Records the port the API actually listens on (PORT=0 picks one). */
  setPort(port: number): void;
  /** Gives the folder up (removes {@link STACK_FILE} if it still names this process). */
  release(): void;
}

/**
 * Whether a process with this ID runs (EPERM: it exists under another user).
 * A zombie does not run: a stack killed with its process group stays one
 * until its parent reaps it, which in a container whose first process reaps
 * nothing is never, so `/proc/<pid>/stat`'s state `Z` counts as gone.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // "pid (comm) state …": the state follows the last ")" (comm may hold one).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc (not Linux): kill(0) is all there is. With /proc, the process ended between the two looks.
    return !existsSync('/proc/self/stat');
  }
}

function readRecord(file: string): StackRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as Partial<StackRecord>;
    return Number.isSafeInteger(record.pid) && record.pid! > 0
      ? { pid: record.pid!, port: Number(record.port), startedAt: String(record.startedAt) }
      : undefined;
  } catch {
    return undefined; // missing, or half-written by a start that died while writing it: nobody holds it
  }
}

/**
 * Claims `dataDir` (which must exist) for this process.
 * @param port - the API port this stack listens on.
 * @throws DataFolderInUseError when {@link STACK_FILE} names another live process.
 */
export function claimDataFolder(dataDir: string, port: number, pid = process.pid): DataFolderClaim {
  const file = path.join(dataDir, STACK_FILE);
  const write = (record: StackRecord, flag: 'wx' | 'w') => writeFileSync(file, `${JSON.stringify(record)}\n`, { flag });
  const record: StackRecord = { pid, port, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      write(record, 'wx');
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readRecord(file);
    if (holder && holder.pid !== pid && isAlive(holder.pid)) throw new DataFolderInUseError(dataDir, holder);
    // Stale: its process is gone. Remove it and claim again (a concurrent claimer may win the exclusive create).
    if (attempt >= 3) throw new Error(`Could not claim the data folder ${dataDir}: ${file} keeps reappearing.`);
    rmSync(file, { force: true });
  }
  return {
    setPort(actual) {
      if (readRecord(file)?.pid === pid) write({ ...record, port: actual }, 'w');
    },
    release() {
      if (readRecord(file)?.pid === pid) rmSync(file, { force: true });
    },
  };
}

/** Empties a claimed data folder (`--reset`) except {@link STACK_FILE}, which keeps the claim. */
export function wipeDataFolder(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  for (const entry of readdirSync(dataDir)) if (entry !== STACK_FILE) rmSync(path.join(dataDir, entry), { recursive: true, force: true });
}
