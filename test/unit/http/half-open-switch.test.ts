import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerHalfClosedSenders } from '../../../src/receive/edge/front-door.js';

/** The one Node internal the front door sets (src/receive/edge/front-door.ts): this fails when Node changes it. */
describe('answerHalfClosedSenders', () => {
  it("sets Node's own http.Server httpAllowHalfOpen, which every server has and starts false", () => {
    const server = createServer();
    expect(Object.hasOwn(server, 'httpAllowHalfOpen')).toBe(true);
    expect(Reflect.get(server, 'httpAllowHalfOpen')).toBe(false);
    answerHalfClosedSenders(server);
    expect(Reflect.get(server, 'httpAllowHalfOpen')).toBe(true);
  });
});
