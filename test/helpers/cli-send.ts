import { createHmac } from 'node:crypto';
import { request } from 'node:http';

export const SECRET = 'cli-test-secret';

export function hmacHex(bytes: Buffer): string {
  return createHmac('sha256', SECRET).update(bytes).digest('hex');
}

export interface Sent {
  id: string;
  status: number;
}

/**
 * POSTs a webhook over node:http with exactly these headers, in this order
 * and spelling (Host and Content-Length are added first and last), and these
 * bytes. Returns the delivery id Reception answered.
 */
export function sendWebhook(base: string, path: string, body: Buffer | string, headers: Array<[string, string]>): Promise<Sent> {
  const url = new URL(path, base);
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const flat: string[] = ['Host', url.host];
  for (const [name, value] of headers) flat.push(name, value);
  flat.push('Content-Length', String(bytes.length));
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: flat });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) {
          reject(new Error(`webhook answered ${res.statusCode ?? 0}: ${text}`));
          return;
        }
        resolve({ id: (JSON.parse(text) as { id: string }).id, status: res.statusCode });
      });
    });
    req.end(bytes);
  });
}

/** A JSON webhook with a body that names it (`{"n": n}`). */
export function sendNumbered(base: string, source: string, n: number): Promise<Sent> {
  return sendWebhook(base, `/api/webhook/${encodeURIComponent(source)}`, `{"n": ${n}}`, [['Content-Type', 'application/json']]);
}
