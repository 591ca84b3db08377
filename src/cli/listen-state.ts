import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './usage.js';

/**
 * Where `reception listen` stopped: the seq of the last delivery the target
 * answered. Written after each forward (to a temp file, synced, renamed
 * over the old one), so a crash leaves either the old or the new position.
 */
export interface ListenState {
  server: string;
  source: string | null;
  forwardTo: string;
  lastSeq: number;
  updatedAt: string;
}

/** `~/.reception/listen-<hash>.json`, one file per server, source and target. */
export function defaultStatePath(server: string, source: string | undefined, forwardTo: string): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([server, source ?? null, forwardTo]))
    .digest('hex')
    .slice(0, 16);
  return join(homedir(), '.reception', `listen-${hash}.json`);
}

/** The saved position, or undefined when there is no file yet. A file that does not parse is an error, never a silent restart. */
export function readState(path: string): ListenState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read the state file ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const lastSeq = record.lastSeq;
  if (typeof lastSeq !== 'number' || !Number.isSafeInteger(lastSeq) || lastSeq < 0) {
    throw new CliError(`the state file ${path} has no valid "lastSeq"; fix it or delete it to start from the present.`);
  }
  return {
    server: String(record.server ?? ''),
    source: typeof record.source === 'string' ? record.source : null,
    forwardTo: String(record.forwardTo ?? ''),
    lastSeq,
    updatedAt: String(record.updatedAt ?? ''),
  };
}

export function writeState(path: string, state: ListenState): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}
