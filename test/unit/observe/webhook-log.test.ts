import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/platform/observe/logger.js';
import { createWebhookLog, type WebhookLogFields } from '../../../src/receive/webhook-log.js';

/** A destination that keeps every line it is handed. */
function capture(): { lines: string[]; write: (line: string) => void } {
  const lines: string[] = [];
  return { lines, write: (line) => lines.push(line) };
}

/** The same line with its time replaced: two lines made a millisecond apart may differ only there. */
const timeless = (line: string): string => line.replace(/"time":"[^"]*"/, '"time":"T"');

const stored: WebhookLogFields = {
  req: { method: 'POST', path: '/api/webhook/stripe', remoteAddress: '127.0.0.1' },
  status: 200,
  ms: 12.345,
  source: 'stripe',
  outcome: 'stored',
  id: 'dlv_01JEXAMPLE0000000000000000',
  size: 949,
  verification: { status: 'verified', scheme: 'stripe' },
};

const cases: Record<string, WebhookLogFields> = {
  stored,
  'a refusal, before the body (no id, no size, no verification)': {
    req: { method: 'GET', path: '/api/webhook/stripe', remoteAddress: '::1' },
    status: 405,
    ms: 0.05,
    source: 'stripe',
    outcome: 'method_not_allowed',
    id: undefined,
    size: undefined,
    verification: undefined,
  },
  'a name that is no source, and a sender already gone': {
    req: { method: 'POST', path: '/api/webhook/%zz', remoteAddress: undefined },
    status: 499,
    ms: 3,
    source: undefined,
    outcome: 'aborted',
    id: undefined,
    size: 0,
    verification: { status: 'failed', scheme: 'github', reason: 'signature "mismatch"' },
  },
  'hostile strings': {
    req: { method: 'POST', path: '/api/webhook/quo%22te', remoteAddress: '127.0.0.1' },
    status: 200,
    ms: 1,
    source: 'quo"te\\ ✓ 😀 <script>\t\u0001',
    outcome: 'duplicate',
    id: 'x'.repeat(150),
    size: 1,
    verification: { status: 'none' },
  },
};

describe('the webhook log line', () => {
  for (const [name, fields] of Object.entries(cases)) {
    it(`is the line pino writes for the same fields: ${name}`, () => {
      const ours = capture();
      const pinos = capture();
      createWebhookLog(createLogger('info', ours))(fields);
      createLogger('info', pinos).info(fields, 'webhook');
      expect(ours.lines).toHaveLength(1);
      expect(timeless(ours.lines[0] as string)).toBe(timeless(pinos.lines[0] as string));
      expect(JSON.parse(ours.lines[0] as string)).toMatchObject({ level: 30, service: 'reception', msg: 'webhook' });
    });
  }

  it('has the time pino would write, as an ISO string of now', () => {
    const ours = capture();
    const before = Date.now();
    createWebhookLog(createLogger('info', ours))(stored);
    const time = Date.parse((JSON.parse(ours.lines[0] as string) as { time: string }).time);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });

  it('writes one line per request, each with its own fields', () => {
    const ours = capture();
    const log = createWebhookLog(createLogger('info', ours));
    for (let i = 0; i < 3; i++) log({ ...stored, id: `dlv_${i}`, size: i });
    expect(ours.lines.map((line) => JSON.parse(line) as { id: string; size: number })).toMatchObject([
      { id: 'dlv_0', size: 0 },
      { id: 'dlv_1', size: 1 },
      { id: 'dlv_2', size: 2 },
    ]);
  });

  it('writes nothing below the logger level', () => {
    const ours = capture();
    const logger = createLogger('warn', ours);
    const log = createWebhookLog(logger);
    log(stored);
    expect(ours.lines).toEqual([]);
    logger.level = 'info';
    log(stored);
    expect(ours.lines).toHaveLength(1);
  });

  it('goes through logger.info for a logger that createLogger did not make', () => {
    const theirs = capture();
    const child = pino({ base: { service: 'reception' } }, theirs).child({ reqId: 7 });
    createWebhookLog(child)(stored);
    expect(JSON.parse(theirs.lines[0] as string)).toMatchObject({ reqId: 7, status: 200, source: 'stripe', msg: 'webhook' });
  });
});
