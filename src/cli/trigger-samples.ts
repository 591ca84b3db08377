import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Small, realistic sample events for `reception trigger`, shaped like what
 * each provider sends (trimmed to the fields people look at). Every call
 * makes fresh ids, so that two triggers are two deliveries, not a duplicate.
 */

/** The verify scheme a provider's deliveries are checked with (docs/verifying.md). */
export type TriggerScheme = 'github' | 'stripe' | 'slack' | 'shopify' | 'standard-webhooks';

export interface ProviderSamples {
  scheme: TriggerScheme;
  /** Event name → the JSON body of one sample event. */
  events: Record<string, (now: Date) => Record<string, unknown>>;
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function alnum(length: number): string {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(length), (byte) => letters[byte % letters.length] ?? 'x').join('');
}

function seconds(now: Date): number {
  return Math.floor(now.getTime() / 1000);
}

const REPOSITORY = {
  id: 719273645,
  name: 'hello-world',
  full_name: 'octo-org/hello-world',
  private: false,
  html_url: 'https://github.com/octo-org/hello-world',
  default_branch: 'main',
  owner: { login: 'octo-org', id: 9919, type: 'Organization' },
};
const SENDER = { login: 'octocat', id: 583231, type: 'User' };

function githubPush(now: Date): Record<string, unknown> {
  const before = hex(20);
  const after = hex(20);
  return {
    ref: 'refs/heads/main',
    before,
    after,
    created: false,
    deleted: false,
    forced: false,
    compare: `https://github.com/octo-org/hello-world/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: [
      {
        id: after,
        message: 'Fix the greeting',
        timestamp: now.toISOString(),
        author: { name: 'The Octocat', email: 'octocat@github.com', username: 'octocat' },
        added: [],
        removed: [],
        modified: ['README.md'],
      },
    ],
    head_commit: { id: after, message: 'Fix the greeting', timestamp: now.toISOString() },
    repository: REPOSITORY,
    pusher: { name: 'octocat', email: 'octocat@github.com' },
    sender: SENDER,
  };
}

function githubPullRequest(now: Date): Record<string, unknown> {
  const number = 1 + (randomBytes(2).readUInt16BE() % 500);
  return {
    action: 'opened',
    number,
    pull_request: {
      id: randomBytes(4).readUInt32BE(),
      number,
      state: 'open',
      title: 'Add a greeting',
      html_url: `https://github.com/octo-org/hello-world/pull/${number}`,
      user: SENDER,
      body: 'Says hello.',
      created_at: now.toISOString(),
      head: { ref: 'greeting', sha: hex(20) },
      base: { ref: 'main', sha: hex(20) },
      draft: false,
      merged: false,
    },
    repository: REPOSITORY,
    sender: SENDER,
  };
}

function stripeEvent(type: string, object: Record<string, unknown>, now: Date): Record<string, unknown> {
  return {
    id: `evt_${alnum(24)}`,
    object: 'event',
    api_version: '2025-10-29.clover',
    created: seconds(now),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${alnum(14)}`, idempotency_key: randomUUID() },
    type,
  };
}

function stripePaymentIntent(now: Date): Record<string, unknown> {
  return stripeEvent(
    'payment_intent.succeeded',
    {
      id: `pi_${alnum(24)}`,
      object: 'payment_intent',
      amount: 2000,
      amount_received: 2000,
      currency: 'usd',
      customer: `cus_${alnum(14)}`,
      description: '(created by reception trigger)',
      payment_method: `pm_${alnum(24)}`,
      status: 'succeeded',
      created: seconds(now),
      livemode: false,
    },
    now,
  );
}

function stripeInvoicePaid(now: Date): Record<string, unknown> {
  return stripeEvent(
    'invoice.paid',
    {
      id: `in_${alnum(24)}`,
      object: 'invoice',
      amount_due: 1500,
      amount_paid: 1500,
      currency: 'usd',
      customer: `cus_${alnum(14)}`,
      customer_email: 'jenny.rosen@example.com',
      number: `${alnum(8).toUpperCase()}-0001`,
      paid: true,
      status: 'paid',
      subscription: `sub_${alnum(24)}`,
      created: seconds(now),
      livemode: false,
    },
    now,
  );
}

function slackMessage(now: Date): Record<string, unknown> {
  const ts = `${seconds(now)}.${String(now.getMilliseconds()).padStart(3, '0')}100`;
  return {
    token: alnum(24),
    team_id: 'T0123ABCD',
    api_app_id: 'A0123ABCD',
    event: {
      type: 'message',
      channel: 'C0123ABCD',
      user: 'U0123ABCD',
      text: 'Hello from reception trigger',
      ts,
      event_ts: ts,
      channel_type: 'channel',
    },
    type: 'event_callback',
    event_id: `Ev${alnum(9).toUpperCase()}`,
    event_time: seconds(now),
    authorizations: [{ team_id: 'T0123ABCD', user_id: 'U0123BOT', is_bot: true }],
  };
}

function shopifyOrder(now: Date): Record<string, unknown> {
  const id = 5_000_000_000_000 + randomBytes(4).readUInt32BE();
  return {
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    name: `#${1000 + (randomBytes(2).readUInt16BE() % 9000)}`,
    email: 'jon@example.com',
    created_at: now.toISOString(),
    currency: 'USD',
    financial_status: 'paid',
    total_price: '24.90',
    subtotal_price: '19.90',
    total_tax: '5.00',
    line_items: [{ id: id + 1, title: 'IPod Nano - 8GB', quantity: 1, price: '19.90', sku: 'IPOD2008PINK' }],
    customer: { id: 115310627314723950, email: 'jon@example.com', first_name: 'Jon', last_name: 'Snow' },
  };
}

function standardUserCreated(now: Date): Record<string, unknown> {
  return {
    type: 'user.created',
    timestamp: now.toISOString(),
    data: { id: `user_${alnum(16)}`, email: 'ada@example.com', name: 'Ada Lovelace' },
  };
}

/** Provider name → its scheme and sample events, as `reception trigger` takes them. */
export const PROVIDERS: Record<string, ProviderSamples> = {
  github: { scheme: 'github', events: { push: githubPush, pull_request: githubPullRequest } },
  stripe: {
    scheme: 'stripe',
    events: { 'payment_intent.succeeded': stripePaymentIntent, 'invoice.paid': stripeInvoicePaid },
  },
  slack: { scheme: 'slack', events: { message: slackMessage } },
  shopify: { scheme: 'shopify', events: { 'orders/create': shopifyOrder } },
  'standard-webhooks': { scheme: 'standard-webhooks', events: { 'user.created': standardUserCreated } },
};
