import { randomUUID } from 'node:crypto';
import { ConfigFileError, loadConfigFile } from '../config/source-config.js';
import { hmac } from '../verify/constant-time.js';
import { decodeSecretKey } from '../verify/standard-webhooks.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { cannotConnect, isRecord } from './api-client.js';
import { PROVIDERS, type TriggerScheme } from './trigger-samples.js';
import { cliUrl, SERVER_FLAGS, serverUrlFromEnvironment } from './server-target.js';
import { CliError, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const triggerSpec: CommandSpec = {
  name: 'trigger',
  summary: 'send a realistic sample event, signed as the provider signs it',
  usage: ['trigger <provider> <event> [--source NAME] [--secret S | --config FILE] [--url URL]'],
  description:
    'Sends one sample event to POST /api/webhook/<source> (the source is the provider name unless --source says), ' +
    'with the headers the provider sets (event type, delivery id) and, when a secret is known, its signature: ' +
    '--secret, or the secrets of the source in the config file (--config, else RECEPTION_CONFIG). Without a secret ' +
    'the event goes unsigned, and the command says so. Prints the delivery id, the status and whether it was signed. ' +
    'Exit 0 when the server answered 2xx, 1 otherwise. Providers and events: ' +
    Object.entries(PROVIDERS)
      .map(([name, samples]) => `${name} (${Object.keys(samples.events).join(', ')})`)
      .join('; ') +
    '.',
  flags: [
    { name: 'source', type: 'string', value: 'NAME', help: 'The source to send to (default: the provider name).' },
    { name: 'secret', type: 'string', value: 'S', help: 'Sign with this secret (as the source verifies it).' },
    {
      name: 'config',
      type: 'string',
      value: 'FILE',
      env: 'RECEPTION_CONFIG',
      help: "Read the source's first verify secret from this config file.",
    },
    ...SERVER_FLAGS,
  ],
  positionals: 2,
  examples: [
    'reception trigger stripe payment_intent.succeeded',
    'reception trigger github push --source gh --secret "my webhook secret"',
    'reception trigger shopify orders/create --config reception.yaml',
  ],
};

/** What goes on the wire for one triggered event. */
export interface TriggerRequest {
  body: string;
  headers: Record<string, string>;
  signed: boolean;
}

/**
 * The request a provider would send for this sample event: its headers and,
 * when `secret` is given, its signature, computed as docs/verifying.md says
 * each scheme checks it. Pure but for fresh ids; `now` sets the timestamps.
 */
export function buildTriggerRequest(provider: string, event: string, secret?: string, now = new Date()): TriggerRequest {
  const samples = PROVIDERS[provider];
  const make = samples?.events[event];
  if (samples === undefined || make === undefined) throw new UsageError(unknownText(provider, event));
  const body = JSON.stringify(make(now));
  const seconds = Math.floor(now.getTime() / 1000);
  const headers = { ...providerHeaders(samples.scheme, event, now) };
  if (secret !== undefined) Object.assign(headers, signature(samples.scheme, secret, body, seconds, headers));
  return { body, headers, signed: secret !== undefined };
}

function providerHeaders(scheme: TriggerScheme, event: string, now: Date): Record<string, string> {
  const seconds = String(Math.floor(now.getTime() / 1000));
  switch (scheme) {
    case 'github':
      return {
        'content-type': 'application/json',
        'user-agent': 'GitHub-Hookshot/reception-trigger',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-github-hook-id': '471932652',
      };
    case 'stripe':
      return {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      };
    case 'slack':
      return {
        'content-type': 'application/json',
        'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        'x-slack-request-timestamp': seconds,
      };
    case 'shopify':
      return {
        'content-type': 'application/json',
        'x-shopify-topic': event,
        'x-shopify-webhook-id': randomUUID(),
        'x-shopify-event-id': randomUUID(),
        'x-shopify-shop-domain': 'reception-demo.myshopify.com',
        'x-shopify-api-version': '2025-10',
        'x-shopify-triggered-at': now.toISOString(),
      };
    case 'standard-webhooks':
      return {
        'content-type': 'application/json',
        'webhook-id': `msg_${randomUUID().replaceAll('-', '')}`,
        'webhook-timestamp': seconds,
      };
  }
}

function signature(
  scheme: TriggerScheme,
  secret: string,
  body: string,
  seconds: number,
  headers: Record<string, string>,
): Record<string, string> {
  switch (scheme) {
    case 'github':
      return { 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body).toString('hex')}` };
    case 'stripe':
      return { 'stripe-signature': `t=${seconds},v1=${hmac('sha256', secret, `${seconds}.${body}`).toString('hex')}` };
    case 'slack':
      return { 'x-slack-signature': `v0=${hmac('sha256', secret, `v0:${seconds}:${body}`).toString('hex')}` };
    case 'shopify':
      return { 'x-shopify-hmac-sha256': hmac('sha256', secret, body).toString('base64') };
    case 'standard-webhooks': {
      const key = decodeSecretKey(secret);
      if (key === undefined) throw new UsageError('--secret: a Standard Webhooks secret is whsec_ followed by a base64 key.');
      const id = headers['webhook-id'] ?? '';
      return { 'webhook-signature': `v1,${hmac('sha256', key, `${id}.${seconds}.${body}`).toString('base64')}` };
    }
  }
}

/** The "unknown provider/event" message: the known ones, and the nearest name. */
function unknownText(provider: string, event: string): string {
  const samples = PROVIDERS[provider];
  if (samples === undefined) {
    const names = Object.keys(PROVIDERS);
    const near = nearestWithin(provider, names, 3);
    return `unknown provider "${escapeForTerminal(provider)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}. Providers: ${names.join(', ')}.`;
  }
  const events = Object.keys(samples.events);
  const near = nearestWithin(event, events, 3);
  return `unknown ${provider} event "${escapeForTerminal(event)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}. Events: ${events.join(', ')}.`;
}

/** The source's first verify secret in the config file, when its scheme is the provider's. */
function secretFromConfig(file: string, source: string, scheme: TriggerScheme): string | undefined {
  let config;
  try {
    config = loadConfigFile(file);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message);
    throw error;
  }
  const verify = config.sources?.[source]?.verify;
  if (verify === undefined) return undefined;
  if (verify.scheme !== scheme) {
    throw new CliError(
      `${file}: source "${source}" verifies with the ${verify.scheme} scheme, not ${scheme}: give --source or --secret.`,
    );
  }
  return verify.secrets[0];
}

export async function runTrigger(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(triggerSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(triggerSpec));
    return 0;
  }
  const [provider, event] = positionals;
  if (provider === undefined || event === undefined) {
    throw new UsageError(
      `which provider and event? ${Object.entries(PROVIDERS)
        .map(([name, samples]) => `${name} (${Object.keys(samples.events).join(', ')})`)
        .join('; ')}.`,
    );
  }
  const samples = PROVIDERS[provider];
  if (samples === undefined || samples.events[event] === undefined) throw new UsageError(unknownText(provider, event));
  const source = stringFlag(values, 'source') ?? provider;
  const givenSecret = stringFlag(values, 'secret');
  const configFlag = stringFlag(values, 'config');
  if (givenSecret !== undefined && configFlag !== undefined) throw new UsageError('give --secret or --config, not both.');
  const configFile = givenSecret === undefined ? stringFlag(values, 'config', 'RECEPTION_CONFIG') : undefined;
  const secret = givenSecret ?? (configFile === undefined ? undefined : secretFromConfig(configFile, source, samples.scheme));

  const given = stringFlag(values, 'url', 'RECEPTION_URL');
  const url = given === undefined ? new URL(serverUrlFromEnvironment()) : cliUrl('--url', given);
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const request = buildTriggerRequest(provider, event, secret);
  const target = `${base}/api/webhook/${encodeURIComponent(source)}`;
  let response: Response;
  try {
    response = await fetch(target, { method: 'POST', headers: request.headers, body: request.body });
  } catch (error) {
    throw cannotConnect(base, error);
  }
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  const signedText = request.signed
    ? `signed (${samples.scheme})`
    : `unsigned (no secret: give --secret, or --config with a verify block for "${source}")`;
  const ok = response.status >= 200 && response.status < 300;
  const id = isRecord(answer) && typeof answer.id === 'string' ? answer.id : undefined;
  const lines = [
    `${provider} ${event} -> POST ${target}`,
    `status:    ${response.status} ${response.statusText}`,
    `signature: ${signedText}`,
  ];
  if (id !== undefined)
    lines.push(`delivery:  ${escapeForTerminal(id)}${isRecord(answer) && answer.duplicate === true ? ' (duplicate)' : ''}`);
  if (!ok) {
    const code = isRecord(answer) && typeof answer.code === 'string' ? `${answer.code}: ` : '';
    const detail = isRecord(answer) && typeof answer.detail === 'string' ? `${code}${answer.detail}` : text.slice(0, 500);
    lines.push(`refused:   ${escapeForTerminal(detail)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok ? 0 : 1;
}
