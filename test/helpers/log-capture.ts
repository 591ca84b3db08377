import { Writable } from 'node:stream';
import { pino } from 'pino';

export type LogLine = Record<string, unknown>;

/** A real pino logger at `info` whose JSON lines land, parsed, in `lines`. */
export function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}
