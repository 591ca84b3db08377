import { Gauge, type Registry } from 'prom-client';
import { ISSUE_KINDS, type IssueKind } from './issue-signals.js';

/**
 * `reception_issues_open{kind}` (CONTRACT 11): read from the store when
 * scraped (one indexed count of the open issues), so that every instance on
 * one database says the same, and a restart changes nothing. Every kind has
 * its line, 0 when none is open. When the store does not answer, the last
 * values read stay.
 */
export function registerIssueGauge(registry: Registry, countOpen: () => Promise<Record<IssueKind, number>>): Gauge<'kind'> {
  return new Gauge({
    name: 'reception_issues_open',
    help: 'Open issues, by kind (destination_down, dead_letters, backlog, verification_failing, transform_failing).',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      let counts: Record<IssueKind, number>;
      try {
        counts = await countOpen();
      } catch {
        return;
      }
      for (const kind of ISSUE_KINDS) this.set({ kind }, counts[kind]);
    },
  });
}
