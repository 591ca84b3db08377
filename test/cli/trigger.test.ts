import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verify as githubVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { buildTriggerRequest } from '../../src/cli/trigger.js';
import type { RunningApp } from '../helpers/app.js';
import { killAllClis, runCli } from '../helpers/cli.js';
import { countOf, startWithConfig } from '../helpers/configured-app.js';
import { readDelivery } from '../helpers/exchange.js';
import { v0Signature } from '../helpers/provider-signatures.js';
import { tempDir } from '../helpers/temp-dir.js';

const SECRETS = {
  github: 'it is a secret to everybody',
  stripe: 'whsec_test_0123456789abcdef',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  shopify: 'shpss_0123456789abcdef',
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

const CONFIG: ConfigFile = {
  sources: {
    github: { verify: { scheme: 'github', secrets: [SECRETS.github] } },
    stripe: { verify: { scheme: 'stripe', secrets: [SECRETS.stripe] } },
    slack: { verify: { scheme: 'slack', secrets: [SECRETS.slack] } },
    shopify: { verify: { scheme: 'shopify', secrets: [SECRETS.shopify] } },
    'standard-webhooks': { verify: { scheme: 'standard-webhooks', secrets: [SECRETS.standard] } },
  },
};

let server: RunningApp;
let dir: { path: string; remove: () => void };
let configFile: string;

beforeEach(async () => {
  server = await startWithConfig(CONFIG);
  dir = tempDir('reception-trigger-');
  configFile = join(dir.path, 'reception.json');
  writeFileSync(configFile, JSON.stringify(CONFIG));
});

afterEach(async () => {
  killAllClis();
  await server.close();
  dir.remove();
});

function trigger(args: string[]): ReturnType<typeof runCli> {
  return runCli(['trigger', ...args, '--url', server.url]);
}

function deliveryId(stdout: string): string {
  const id = /^delivery: +(\S+)/m.exec(stdout)?.[1];
  expect(id, stdout).toBeDefined();
  return id ?? '';
}

const CASES: [string, string, string][] = [
  ['github', 'push', 'push'],
  ['github', 'pull_request', 'pull_request.opened'],
  ['stripe', 'payment_intent.succeeded', 'payment_intent.succeeded'],
  ['stripe', 'invoice.paid', 'invoice.paid'],
  ['slack', 'message', 'message'],
  ['shopify', 'orders/create', 'orders/create'],
  ['standard-webhooks', 'user.created', 'user.created'],
];

describe('reception trigger', { timeout: 60_000 }, () => {
  it.each(CASES)('sends %s %s signed with the config file secret: stored, verified', async (provider, event, eventType) => {
    const { code, stdout, stderr } = await trigger([provider, event, '--config', configFile]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('status:    200');
    expect(stdout).toContain('signature: signed');
    const delivery = await readDelivery(server, deliveryId(stdout));
    expect(delivery.source).toBe(provider);
    expect(delivery.verification).toMatchObject({ status: 'verified', scheme: CONFIG.sources?.[provider]?.verify?.scheme });
    expect(delivery.eventType).toBe(eventType);
  });

  it('sends unsigned to a source without a secret, and says so', async () => {
    const { code, stdout } = await trigger(['github', 'push', '--source', 'playground']);
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('signature: unsigned');
    const delivery = await readDelivery(server, deliveryId(stdout));
    expect(delivery.source).toBe('playground');
    expect(delivery.verification).toMatchObject({ status: 'none' });
  });

  it('--secret signs for any source name', async () => {
    const { code, stdout } = await trigger(['stripe', 'invoice.paid', '--source', 'stripe', '--secret', SECRETS.stripe]);
    expect(code, stdout).toBe(0);
    expect((await readDelivery(server, deliveryId(stdout))).verification).toMatchObject({ status: 'verified' });
  });

  it('a wrong secret: the server refuses with 401, nothing is stored, exit 1', async () => {
    const { code, stdout } = await trigger(['shopify', 'orders/create', '--secret', 'not-the-secret']);
    expect(code, stdout).toBe(1);
    expect(stdout).toContain('status:    401');
    expect(stdout).toContain('signature_invalid');
    expect(await countOf(server, 'shopify')).toBe(0);
  });

  it('an unknown provider or event: exit 2 with the known ones and a guess', async () => {
    const provider = await trigger(['githb', 'push']);
    expect(provider.code).toBe(2);
    expect(provider.stderr).toContain('did you mean "github"?');
    expect(provider.stderr).toContain('github, stripe, slack, shopify, standard-webhooks');
    const event = await trigger(['stripe', 'invoice.payd']);
    expect(event.code).toBe(2);
    expect(event.stderr).toContain('did you mean "invoice.paid"?');
    expect(event.stderr).toContain('payment_intent.succeeded, invoice.paid');
    expect(await countOf(server, 'stripe')).toBe(0);
  });
});

describe('trigger signatures, checked by the providers’ own libraries', () => {
  it('GitHub: @octokit/webhooks-methods verifies X-Hub-Signature-256', async () => {
    const request = buildTriggerRequest('github', 'push', SECRETS.github);
    expect(request.headers['x-github-event']).toBe('push');
    expect(await githubVerify(SECRETS.github, request.body, request.headers['x-hub-signature-256'] ?? '')).toBe(true);
    expect(await githubVerify('other', request.body, request.headers['x-hub-signature-256'] ?? '')).toBe(false);
  });

  it('Stripe: stripe.webhooks.constructEvent accepts Stripe-Signature', () => {
    const request = buildTriggerRequest('stripe', 'payment_intent.succeeded', SECRETS.stripe);
    const event = Stripe.webhooks.constructEvent(request.body, request.headers['stripe-signature'] ?? '', SECRETS.stripe);
    expect(event.type).toBe('payment_intent.succeeded');
    expect(() =>
      Stripe.webhooks.constructEvent(request.body, request.headers['stripe-signature'] ?? '', 'whsec_other'),
    ).toThrow();
  });

  it('Standard Webhooks: the standardwebhooks library verifies webhook-signature', () => {
    const request = buildTriggerRequest('standard-webhooks', 'user.created', SECRETS.standard);
    const payload = new Webhook(SECRETS.standard).verify(request.body, request.headers);
    expect(payload).toMatchObject({ type: 'user.created' });
    expect(() => new Webhook('whsec_b3RoZXIgc2VjcmV0IGtleQ==').verify(request.body, request.headers)).toThrow();
  });

  it('Slack and Shopify: as their docs compute it with node:crypto', () => {
    const slack = buildTriggerRequest('slack', 'message', SECRETS.slack);
    const ts = Number(slack.headers['x-slack-request-timestamp']);
    expect(slack.headers['x-slack-signature']).toBe(v0Signature(SECRETS.slack, ts, slack.body));
    const shopify = buildTriggerRequest('shopify', 'orders/create', SECRETS.shopify);
    expect(shopify.headers['x-shopify-topic']).toBe('orders/create');
    expect(shopify.headers['x-shopify-hmac-sha256']).toBe(
      createHmac('sha256', SECRETS.shopify).update(shopify.body).digest('base64'),
    );
  });

  it('without a secret nothing is signed', () => {
    const request = buildTriggerRequest('github', 'push');
    expect(request.signed).toBe(false);
    expect(request.headers['x-hub-signature-256']).toBeUndefined();
  });
});
