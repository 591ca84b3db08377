import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
/** axe-core's own build, read once and evaluated in each page that is checked. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

// Runs in the page (the tests are compiled without the DOM's types, so it is text): axe's
// violations, cut down to what AxeViolation holds.
const RUN = `(async () => {
  const result = await window.axe.run(document, { resultTypes: ['violations'] });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? null,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.map(String), html: n.html, failureSummary: n.failureSummary ?? '' })),
  }));
})()`;

export type AxeImpact = 'minor' | 'moderate' | 'serious' | 'critical' | null;

/** One rule that failed, with the nodes it failed on (the part of axe's result a failure message needs). */
export interface AxeViolation {
  id: string;
  impact: AxeImpact;
  help: string;
  nodes: Array<{ target: string[]; html: string; failureSummary: string }>;
}

/**
 * Runs axe-core on the page as it stands and answers its violations. The
 * source goes in through the DevTools protocol (page.evaluate), which the
 * page's Content-Security-Policy does not govern, so the page's own policy
 * stays as it is served.
 */
export async function runAxe(page: Page): Promise<AxeViolation[]> {
  const present = (await page.evaluate('typeof window.axe')) === 'object';
  if (!present) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate(RUN)) as AxeViolation[];
}

/** The violations a test fails on: those axe rates critical or serious. */
export function severe(violations: AxeViolation[]): AxeViolation[] {
  return violations.filter((v) => v.impact === 'critical' || v.impact === 'serious');
}

/** Each violation's id, impact and target nodes, one node a line, for a failure message. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) =>
      [
        `${v.id} (${v.impact ?? 'no impact'}): ${v.help}`,
        ...v.nodes.map(
          (n) => `    ${n.target.join(' ')}  ${n.html.slice(0, 160)}\n      ${n.failureSummary.replace(/\n/g, ' ')}`,
        ),
      ].join('\n'),
    )
    .join('\n');
}
