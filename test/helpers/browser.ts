import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startApp, type RunningApp } from './app.js';
import { ensureWebBuilt } from './web-build.js';

/** Debian's Chromium; `.ci/run` installs it with apt when it is missing. */
export const CHROMIUM_PATH = process.env.RECEPTION_CHROMIUM ?? '/usr/bin/chromium';

const present = existsSync(CHROMIUM_PATH);
const inCi = process.env.CI === 'true' || process.env.CI === '1';

/**
 * Locally, without Chromium, the browser tests are skipped with a loud
 * message. Under CI they run anyway and fail at launch: a missing browser
 * must never turn into a green run.
 */
export const skipBrowserTests = !present && !inCi;

if (skipBrowserTests) {
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!! SKIPPING the browser tests: no Chromium at ${CHROMIUM_PATH}.\n` +
      '!! Install it with: apt-get update && apt-get install -y chromium\n' +
      `!! (Under CI=true these tests fail instead of skipping.)\n${'!'.repeat(78)}\n\n`,
  );
}

export async function launchChromium(): Promise<Browser> {
  if (!present) {
    throw new Error(`Chromium is not at ${CHROMIUM_PATH}; install it with: apt-get update && apt-get install -y chromium`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Registers the hooks every browser suite needs: the page built, Chromium
 * launched, a real server started, and both closed afterwards. `use`
 * receives them once they are up.
 */
export function useBrowserAndServer(use: (browser: Browser, server: RunningApp) => void): void {
  let browser: Browser | undefined;
  let server: RunningApp | undefined;
  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await launchChromium();
    server = await startApp();
    use(browser, server);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
}
