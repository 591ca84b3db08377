import { eventTypeOf } from '../../src/event-types/event-type.js';
import type { HeaderList } from '../../src/platform/http/header-list.js';
import type { NewDelivery, Verification } from '../../src/deliveries/delivery-store.js';

/**
 * Deliveries as real senders send them, for filling a large inbox: seven
 * sources (Stripe, GitHub, Shopify, Slack, Standard Webhooks, Twilio's form
 * posts, a source with its own event type header), each with its event
 * types in realistic proportions, their usual headers, and bodies of 0.4 to
 * 3 KiB that name customers and e-mail addresses (what people search for).
 * Deterministic: delivery n is the same on every run.
 */

/** Customers that bodies name: `cus_<n>` and `user<n>@example.com`. One in CUSTOMERS is each. */
export const CUSTOMERS = 50_000;

interface Kind {
  source: string;
  /** Share of the inbox, in thousandths. */
  weight: number;
  scheme?: string;
  make(n: number, random: Random): { headers: HeaderList; body: string; contentType: string; type?: string };
}

/** A small fast PRNG (mulberry32), seeded per delivery. */
class Random {
  constructor(private state: number) {}
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

const WORDS =
  'alpha beta gamma delta widget gadget invoice order shipment refund subscription plan monthly annual team seat license'.split(
    ' ',
  );

function sentence(random: Random, words: number): string {
  return Array.from({ length: words }, () => random.pick(WORDS)).join(' ');
}

function customer(random: Random): { id: string; email: string; name: string } {
  const n = random.int(CUSTOMERS);
  return { id: `cus_${n}`, email: `user${n}@example.com`, name: `Customer ${n}` };
}

const JSON_TYPE = 'application/json';
const common = (host: string, agent: string): HeaderList => [
  ['Host', host],
  ['User-Agent', agent],
  ['Content-Type', JSON_TYPE],
  ['Accept', '*/*'],
];

const STRIPE_TYPES = [
  'invoice.paid',
  'invoice.paid',
  'invoice.created',
  'invoice.finalized',
  'invoice.payment_failed',
  'customer.created',
  'customer.updated',
  'charge.succeeded',
  'charge.succeeded',
  'charge.failed',
  'payment_intent.succeeded',
  'payment_intent.created',
] as const;
const GITHUB_EVENTS = [
  ['push', undefined],
  ['push', undefined],
  ['pull_request', 'opened'],
  ['pull_request', 'closed'],
  ['pull_request', 'synchronize'],
  ['issues', 'opened'],
  ['issue_comment', 'created'],
  ['check_run', 'completed'],
] as const;
const SHOPIFY_TOPICS = ['orders/create', 'orders/paid', 'orders/fulfilled', 'carts/update', 'customers/create'] as const;

const KINDS: readonly Kind[] = [
  {
    source: 'stripe',
    weight: 300,
    scheme: 'stripe',
    make: (n, random) => {
      const who = customer(random);
      const type = random.pick(STRIPE_TYPES);
      const lines = Array.from({ length: 1 + random.int(6) }, (_, i) => ({
        id: `il_${n}_${i}`,
        description: `${sentence(random, 3)} for ${who.name}`,
        amount: random.int(100_000),
      }));
      const body = {
        id: `evt_${n}`,
        object: 'event',
        api_version: '2024-06-20',
        created: 1_700_000_000 + n,
        data: { object: { id: `in_${n}`, customer: who.id, customer_email: who.email, currency: 'usd', lines } },
        livemode: false,
        pending_webhooks: 1,
        type,
      };
      return {
        headers: [
          ...common('hooks.example.com', 'Stripe/1.0 (+https://stripe.com/docs/webhooks)'),
          ['Stripe-Signature', `t=1700000000,v1=${n.toString(16).padStart(64, '0')}`],
        ],
        body: JSON.stringify(body),
        contentType: 'application/json; charset=utf-8',
      };
    },
  },
  {
    source: 'github',
    weight: 250,
    scheme: 'github',
    make: (n, random) => {
      const [event, action] = random.pick(GITHUB_EVENTS);
      const who = customer(random);
      const body = {
        ...(action === undefined ? {} : { action }),
        ref: 'refs/heads/main',
        repository: { id: 1000 + random.int(50), full_name: `acme/${random.pick(WORDS)}-service`, private: true },
        sender: { login: `dev${random.int(300)}`, email: who.email },
        head_commit: { id: n.toString(16).padStart(40, '0'), message: sentence(random, 8 + random.int(20)) },
      };
      return {
        headers: [
          ...common('hooks.example.com', 'GitHub-Hookshot/abc123'),
          ['X-GitHub-Event', event],
          ['X-GitHub-Delivery', `d-${n}`],
          ['X-Hub-Signature-256', `sha256=${n.toString(16).padStart(64, '0')}`],
        ],
        body: JSON.stringify(body),
        contentType: JSON_TYPE,
      };
    },
  },
  {
    source: 'shopify',
    weight: 150,
    scheme: 'shopify',
    make: (n, random) => {
      const who = customer(random);
      const items = Array.from({ length: 1 + random.int(4) }, (_, i) => ({
        sku: `SKU-${random.int(5000)}`,
        title: sentence(random, 2),
        i,
      }));
      return {
        headers: [
          ...common('hooks.example.com', 'Shopify-Captain-Hook'),
          ['X-Shopify-Topic', random.pick(SHOPIFY_TOPICS)],
          ['X-Shopify-Shop-Domain', `shop${random.int(20)}.myshopify.com`],
          ['X-Shopify-Webhook-Id', `w-${n}`],
        ],
        body: JSON.stringify({
          id: n,
          email: who.email,
          customer: { id: who.id, name: who.name },
          line_items: items,
          note: sentence(random, 6),
        }),
        contentType: JSON_TYPE,
      };
    },
  },
  {
    source: 'slack',
    weight: 100,
    scheme: 'slack',
    make: (n, random) => ({
      headers: [
        ...common('hooks.example.com', 'Slackbot 1.0 (+https://api.slack.com/robots)'),
        ['X-Slack-Request-Timestamp', '1700000000'],
      ],
      body: JSON.stringify({
        type: 'event_callback',
        event_id: `Ev${n}`,
        event: {
          type: random.pick(['message', 'message', 'app_mention', 'reaction_added']),
          text: sentence(random, 5 + random.int(15)),
          user: `U${random.int(500)}`,
        },
      }),
      contentType: JSON_TYPE,
    }),
  },
  {
    source: 'app',
    weight: 100,
    scheme: 'standard-webhooks',
    make: (n, random) => {
      const who = customer(random);
      return {
        headers: [
          ...common('hooks.example.com', 'Svix-Webhooks/1.0'),
          ['webhook-id', `msg_${n}`],
          ['webhook-timestamp', '1700000000'],
        ],
        body: JSON.stringify({
          type: random.pick(['user.created', 'user.updated', 'session.ended']),
          data: { id: who.id, email: who.email, plan: random.pick(WORDS) },
        }),
        contentType: JSON_TYPE,
      };
    },
  },
  {
    source: 'twilio',
    weight: 50,
    make: (n, random) => ({
      headers: [
        ['Host', 'hooks.example.com'],
        ['User-Agent', 'TwilioProxy/1.1'],
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['I-Twilio-Idempotency-Token', `t-${n}`],
      ],
      body: new URLSearchParams({
        From: `+1415555${String(random.int(10_000)).padStart(4, '0')}`,
        Body: sentence(random, 6),
        MessageSid: `SM${n}`,
      }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    }),
  },
  {
    source: 'orders',
    weight: 50,
    make: (n, random) => {
      const who = customer(random);
      return {
        headers: [
          ...common('hooks.example.com', 'orders-service/2.3'),
          ['X-Event', random.pick(['order.placed', 'order.shipped', 'order.cancelled'])],
          ['X-Request-Id', `r-${n}`],
        ],
        body: JSON.stringify({ order: n, customer: who.email, items: random.int(10), note: sentence(random, 4) }),
        contentType: JSON_TYPE,
      };
    },
  },
];

const TOTAL_WEIGHT = KINDS.reduce((sum, kind) => sum + kind.weight, 0);

/** The source's own event type setting, as its config would say (only `orders` has one). */
export const EVENT_TYPE_SETTINGS: Record<string, { header: string }> = { orders: { header: 'X-Event' } };

/** Delivery number `n` of an inbox whose deliveries span [`from`, `to`) in time, evenly, oldest first. */
export function benchDelivery(n: number, total: number, from: number, to: number): NewDelivery {
  const random = new Random(n * 2654435761);
  let pick = random.int(TOTAL_WEIGHT);
  let kind = KINDS[0] as Kind;
  for (const candidate of KINDS) {
    if (pick < candidate.weight) {
      kind = candidate;
      break;
    }
    pick -= candidate.weight;
  }
  const made = kind.make(n, random);
  const raw = Buffer.from(made.body);
  // One in a hundred signed deliveries failed its check and was kept (onFailure: keep).
  const verification: Verification =
    kind.scheme === undefined
      ? { status: 'none' }
      : random.int(100) === 0
        ? { status: 'failed', scheme: kind.scheme, reason: 'mismatch' }
        : { status: 'verified', scheme: kind.scheme };
  const eventType = eventTypeOf(
    { scheme: kind.scheme, headers: made.headers, contentType: made.contentType, raw },
    EVENT_TYPE_SETTINGS[kind.source],
  );
  return {
    id: `bench-${n}`,
    source: kind.source,
    receivedAt: from + Math.floor(((to - from) * n) / total),
    method: 'POST',
    query: '',
    contentType: made.contentType,
    remoteAddress: `203.0.113.${random.int(250)}`,
    headers: made.headers,
    raw,
    verification,
    dedupKey: null,
    eventType,
  };
}
