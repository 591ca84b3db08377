import type { RefusalJson, RefusalPage } from '../../src/api/refusal-schemas.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';

export type { RefusalJson, RefusalPage };

type Server = RunningApp<InboxDatabase>;

/** One page of `GET /api/refusals` with the token; insists on 200. */
export async function refusalPage(server: Server, query = ''): Promise<RefusalPage> {
  const res = await fetch(`${server.url}/api/refusals${query === '' ? '' : `?${query}`}`, { headers: server.auth });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /api/refusals?${query}: ${res.status} ${text}`);
  return JSON.parse(text) as RefusalPage;
}

/** Every refusal (of `source`), newest first, following nextCursor. */
export async function allRefusals(server: Server, source?: string, limit = 500): Promise<RefusalJson[]> {
  const all: RefusalJson[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: String(limit) });
    if (source !== undefined) params.set('source', source);
    if (cursor !== null) params.set('cursor', cursor);
    const page = await refusalPage(server, params.toString());
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

/**
 * Waits until the writer has written what is buffered (it writes on a timer,
 * off the delivery path), then answers the newest refusal.
 */
export async function newestRefusal(server: Server, after = 0): Promise<RefusalJson> {
  const deadline = Date.now() + 5000;
  for (;;) {
    await server.app.refusals.flush();
    const [newest] = (await refusalPage(server, 'limit=1')).items;
    if (newest !== undefined && newest.seq > after) return newest;
    if (Date.now() > deadline) throw new Error(`no refusal after seq ${after}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The seq of the newest refusal now (0: none), after writing what is buffered. */
export async function latestRefusalSeq(server: Server): Promise<number> {
  await server.app.refusals.flush();
  return (await refusalPage(server, 'limit=1')).items[0]?.seq ?? 0;
}
