import { describe, expect, it } from 'vitest';
import { ListenSummary, outcomeText, verdictOf } from '../../../src/cli/listen-forwarding.js';
import type { DeliveryJson } from '../../../src/api/schemas.js';

const RED = '\u001b[31m';
const GREEN = '\u001b[32m';

describe("listen's judgement of the target's answer", () => {
  it('2xx succeeded, 4xx and 5xx failed, 1xx and 3xx neither', () => {
    expect([200, 204, 299].map(verdictOf)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect([400, 404, 422, 500, 501].map(verdictOf)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
    expect([301, 304].map(verdictOf)).toEqual(['other', 'other']);
  });

  it('on a terminal a failure is red and a success green; without colours the word says it', () => {
    const failed = { status: 500, statusText: 'Internal Server Error', ms: 3, verdict: 'failed' as const, attempts: 1 };
    const ok = { status: 200, statusText: 'OK', ms: 2, verdict: 'succeeded' as const, attempts: 1 };
    expect(outcomeText(failed, true)).toBe(`${RED}-> 500 Internal Server Error  3 ms  failed\u001b[39m`);
    expect(outcomeText(ok, true)).toBe(`${GREEN}-> 200 OK  2 ms\u001b[39m`);
    expect(outcomeText(failed, false)).toBe('-> 500 Internal Server Error  3 ms  failed');
    // A status text is the target's: escaped before it reaches the terminal.
    expect(outcomeText({ ...failed, statusText: 'Bad\u001b[2J' }, false)).toBe('-> 500 Bad\\e[2J  3 ms  failed');
  });

  it('the summary counts each kind and names the failed deliveries', () => {
    const summary = new ListenSummary();
    const delivery = (seq: number): DeliveryJson => ({ seq, id: `id-${seq}` }) as DeliveryJson;
    summary.add(delivery(1), { status: 200, statusText: 'OK', ms: 1, verdict: 'succeeded', attempts: 1 });
    summary.add(delivery(2), { status: 404, statusText: 'Not Found', ms: 1, verdict: 'failed', attempts: 1 });
    summary.add(delivery(3), { status: 302, statusText: 'Found', ms: 1, verdict: 'other', attempts: 1 });
    expect(summary.text('http://localhost:3000/')).toBe(
      'listen: forwarded 3: 1 succeeded, 1 failed, 1 answered 1xx/3xx (seq 2 id-2 -> 404); send one again with: reception replay <id> --to http://localhost:3000/',
    );
  });
});
