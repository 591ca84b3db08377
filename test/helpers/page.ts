import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Static } from 'typebox';
import type { ReceivedSchema } from '../../src/api/schemas.js';
import type { RunningApp } from './app.js';

/** What a page needs of a running server (either store). */
type Server = Pick<RunningApp, 'url' | 'token'>;

export interface PageSession {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Dialogs (alert, confirm, prompt) that something opened; each is dismissed. */
  dialogs: string[];
  /** Console messages of type error. */
  consoleErrors: string[];
  /** Content-Security-Policy violations the page reported. */
  violations(): Promise<string[]>;
  close(): Promise<void>;
}

// Runs before the page's own script: records CSP violations, so a test can
// tell "nothing tried to run" from "something tried and CSP stopped it".
const RECORD_VIOLATIONS = `
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__violations.push(event.violatedDirective + ' ' + (event.blockedURI || '') + ' ' + (event.sample || ''));
  });
`;

export interface OpenOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Log in through the form and wait until the live stream is connected (default true). */
  logIn?: boolean;
  /** Grant the async clipboard (for "Copy as curl"). */
  clipboard?: boolean;
  /** Route (hash) to open, such as `#source=github`. */
  hash?: string;
}

export async function openPage(browser: Browser, server: Server, options: OpenOptions = {}): Promise<PageSession> {
  const context = await browser.newContext({
    baseURL: server.url,
    viewport: options.viewport ?? { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
    ...(options.clipboard === true ? { permissions: ['clipboard-read', 'clipboard-write'] } : {}),
  });
  await context.addInitScript({ content: RECORD_VIOLATIONS });
  const page = await context.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`/${options.hash ?? ''}`);
  if (options.logIn !== false) await logIn(page, server.token);
  return {
    context,
    page,
    requests,
    dialogs,
    consoleErrors,
    violations: async () => (await page.evaluate('window.__violations')) as string[],
    close: () => context.close(),
  };
}

/** Fills the login form and waits for the inbox with its live stream connected. */
export async function logIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('.live[data-state="live"]').waitFor({ timeout: 5000 });
}

/** The webhook's answer, typed from the API's schema. */
export type Sent = Static<typeof ReceivedSchema>;

/** POSTs a webhook from outside the browser, as a sender would. */
export async function sendWebhook(
  server: Server,
  source: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<Sent> {
  const response = await fetch(`${server.url}/api/webhook/${encodeURIComponent(source)}`, { method: 'POST', headers, body });
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Sent;
}

/** The row of a delivery in the list. */
export function row(page: Page, id: string) {
  return page.locator(`.delivery-list li[data-id="${id}"]`);
}
