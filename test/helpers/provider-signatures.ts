import { createHmac } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';

/**
 * Requests signed the way each provider signs them: with the provider's own
 * library where one exists (Stripe, GitHub, Standard Webhooks, Twilio), else
 * with `node:crypto` following the provider's documentation (Shopify, Slack,
 * Zoom, generic HMAC).
 */

/** What goes on the wire for one webhook request. */
export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
  /** The request's own query string, without `?`. */
  query?: string;
}

export const JSON_TYPE = 'application/json';
export const FORM_TYPE = 'application/x-www-form-urlencoded';

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function stripeRequest(payload: string, secret: string, timestamp = nowSeconds()): SignedRequest {
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  return { body: payload, headers: { 'content-type': JSON_TYPE, 'stripe-signature': header } };
}

export async function githubRequest(payload: string, secret: string, delivery: string): Promise<SignedRequest> {
  return {
    body: payload,
    headers: {
      'content-type': JSON_TYPE,
      'x-github-event': 'push',
      'x-github-delivery': delivery,
      'x-hub-signature-256': await githubSign(secret, payload),
    },
  };
}

/** Standard Webhooks with `webhook-*` headers, or Svix's `svix-*` names. */
export function standardRequest(
  payload: string,
  secret: string,
  id: string,
  timestamp = nowSeconds(),
  prefix: 'webhook' | 'svix' = 'webhook',
): SignedRequest {
  const signature = new Webhook(secret).sign(id, new Date(timestamp * 1000), payload);
  return {
    body: payload,
    headers: {
      'content-type': JSON_TYPE,
      [`${prefix}-id`]: id,
      [`${prefix}-timestamp`]: String(timestamp),
      [`${prefix}-signature`]: signature,
    },
  };
}

export function shopifyRequest(payload: string, secret: string, webhookId: string): SignedRequest {
  return {
    body: payload,
    headers: {
      'content-type': JSON_TYPE,
      'x-shopify-topic': 'orders/create',
      'x-shopify-webhook-id': webhookId,
      'x-shopify-hmac-sha256': createHmac('sha256', secret).update(payload).digest('base64'),
    },
  };
}

/** `v0=` + hex HMAC-SHA256 of `v0:{ts}:{body}`: Slack and Zoom alike. */
export function v0Signature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export function slackRequest(payload: string, secret: string, timestamp = nowSeconds(), contentType = JSON_TYPE): SignedRequest {
  return {
    body: payload,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': v0Signature(secret, timestamp, payload),
    },
  };
}

export function zoomRequest(payload: string, secret: string, timestamp = nowSeconds()): SignedRequest {
  return {
    body: payload,
    headers: {
      'content-type': JSON_TYPE,
      'x-zm-request-timestamp': String(timestamp),
      'x-zm-signature': v0Signature(secret, timestamp, payload),
    },
  };
}

/**
 * A Twilio form POST to `publicUrl?query`, signed by twilio's own
 * `getExpectedTwilioSignature` over that URL and the form's parameters.
 */
export function twilioFormRequest(params: Record<string, string>, token: string, publicUrl: string, query = ''): SignedRequest {
  const signedUrl = query === '' ? publicUrl : `${publicUrl}?${query}`;
  const signature = twilio.getExpectedTwilioSignature(token, signedUrl, params);
  return {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': FORM_TYPE, 'x-twilio-signature': signature },
    query,
  };
}

/**
 * A Twilio JSON POST: the URL carries `bodySHA256` (twilio's
 * `getExpectedBodyHash`) and the signature covers the URL alone.
 */
export function twilioJsonRequest(payload: string, token: string, publicUrl: string, query = ''): SignedRequest {
  const hash = `bodySHA256=${twilio.getExpectedBodyHash(payload)}`;
  const fullQuery = query === '' ? hash : `${query}&${hash}`;
  const signedUrl = `${publicUrl}?${fullQuery}`;
  const signature = twilio.getExpectedTwilioSignature(token, signedUrl, {});
  if (!twilio.validateRequestWithBody(token, signature, signedUrl, payload)) {
    throw new Error('twilio does not accept its own signature: the test request is wrong');
  }
  return { body: payload, headers: { 'content-type': JSON_TYPE, 'x-twilio-signature': signature }, query: fullQuery };
}

export interface HmacStyle {
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  prefix?: string;
}

export function hmacRequest(payload: string, secret: string, style: HmacStyle): SignedRequest {
  const digest = createHmac(style.algorithm, secret).update(payload).digest(style.encoding);
  return { body: payload, headers: { 'content-type': JSON_TYPE, [style.header]: `${style.prefix ?? ''}${digest}` } };
}
