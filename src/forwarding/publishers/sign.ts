import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing of what is sent (CONTRACT 6): `webhook-signature`
 * is `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the
 * secret's bytes (`whsec_` then base64). Written here rather than with the
 * `standardwebhooks` package because that signs a string, and a forward
 * sends the stored bytes exactly, whatever they are; the tests check the
 * result with the package.
 */
export class StandardWebhooksSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  }

  /** The two headers for a message: its timestamp in seconds and its signature. */
  sign(id: string, timestampSeconds: number, body: Buffer): { 'webhook-timestamp': string; 'webhook-signature': string } {
    const mac = createHmac('sha256', this.key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
    return { 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${mac}` };
  }
}
