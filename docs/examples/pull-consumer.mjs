#!/usr/bin/env node
/* global process, console, fetch, setTimeout */
// A consumer of a Reception pull destination (docs/pull-consumers.md).
// Plain Node 20, no dependencies:
//
//   RECEPTION_URL=http://127.0.0.1:8080 RECEPTION_TOKEN=... RECEPTION_DESTINATION=worker \
//     node docs/examples/pull-consumer.mjs
//
// It claims up to 10 deliveries at a time, handles each, and acks it with the
// claim's lease (or nacks it when the work failed). RECEPTION_PULL_ONCE=1:
// stop at the first empty claim instead of waiting for more.

const url = process.env.RECEPTION_URL ?? 'http://127.0.0.1:8080';
const token = process.env.RECEPTION_TOKEN;
const destination = process.env.RECEPTION_DESTINATION ?? 'worker';
const once = process.env.RECEPTION_PULL_ONCE === '1';
const VISIBILITY_SECONDS = 30;

if (token === undefined || token === '') {
  console.error('Set RECEPTION_TOKEN to the API token.');
  process.exit(2);
}

/** The work itself. It must finish within the visibility, and may run twice for one delivery (see `seen`). */
async function handle(delivery) {
  console.log(JSON.stringify({ handled: delivery.id, source: delivery.source, eventType: delivery.eventType }));
}

/**
 * Delivery ids already handled: a lease can be lost (409 lease_lost) after the
 * work is done, and the delivery is then handed out again. A real consumer
 * keeps these where its work is stored (a unique key in its own database).
 */
const seen = new Set();

async function call(path, body) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

async function settle(item, ok) {
  const path = `/api/forwards/${encodeURIComponent(item.forwardId)}/${ok ? 'ack' : 'nack'}`;
  const answer = await call(path, ok ? { lease: item.lease } : { lease: item.lease, delaySeconds: 60 });
  if (answer.status === 204) return;
  if (answer.status === 409 && answer.json?.code === 'lease_lost') {
    // Our lease ran out and the delivery is (or will be) someone else's: nothing changed.
    console.error(`lease lost for ${item.delivery.id}: it will be handed out again`);
    return;
  }
  throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.json)}`);
}

for (;;) {
  const claim = await call(`/api/destinations/${encodeURIComponent(destination)}/claim`, {
    max: 10,
    visibilitySeconds: VISIBILITY_SECONDS,
  });
  if (claim.status !== 200) throw new Error(`claim answered ${claim.status}: ${JSON.stringify(claim.json)}`);
  const { items } = claim.json;
  if (items.length === 0) {
    if (once) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    continue;
  }
  for (const item of items) {
    let ok = true;
    try {
      if (!seen.has(item.delivery.id)) await handle(item.delivery);
      seen.add(item.delivery.id);
    } catch (error) {
      console.error(`handling ${item.delivery.id} failed: ${error}`);
      ok = false;
    }
    await settle(item, ok);
  }
}
