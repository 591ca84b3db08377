import { afterEach, describe, expect, it } from 'vitest';

import { apiCall, logEntries, sendSome, writeConfig } from '../helpers/forwarding-process.js';
import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';
import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 6, "What can never succeed fails at once" (2026-11-27), as issue
 * 28 found it: the first forward most new users write,
 * `http://localhost:3000/` without `allowPrivateNetwork`, is warned of in the
 * start-up log (naming the destination and the setting), and its forwards
 * fail after one attempt instead of 12 retries over 3 days.
 */

const children = new ServerChildren();
afterEach(() => children.cleanup());

describe('a destination on a private network without allowPrivateNetwork', () => {
  it('is warned of at start, and its forward fails after one attempt with destination_not_allowed', async () => {
    const data = children.dataDir();
    const file = writeConfig(data, {
      destinations: {
        local: { url: 'http://localhost:3000/' },
        allowed: { url: 'http://127.0.0.1:9/', allowPrivateNetwork: true, retry: { attempts: 1 } },
        public: { url: 'https://app.example.com/hooks' },
      },
      sources: { shop: { forward: [{ to: 'local' }] } },
    });
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: file });
    const warnings = logEntries(server).filter((entry) => entry.setting === 'allowPrivateNetwork');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        destination: 'local',
        host: 'localhost',
        msg: expect.stringContaining('add allowPrivateNetwork: true to destinations.local') as unknown,
      }),
    ]);

    const [id] = await sendSome(server, 'shop', 1, 'first');
    type Forwards = { items: Array<{ status: string; attempts: Array<{ error: string | null }> }> };
    let forwards: Forwards['items'] = [];
    await eventually(async () => {
      forwards = (await apiCall<Forwards>(server, `/api/deliveries/${id ?? ''}/forwards`)).json.items;
      return forwards[0]?.status === 'failed';
    });
    expect(forwards[0]?.attempts).toHaveLength(1);
    expect(forwards[0]?.attempts[0]?.error).toMatch(/^destination_not_allowed: .*allowPrivateNetwork: true/);
  });
});
