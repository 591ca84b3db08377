import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/source-config.js';
import { transformUsers } from '../../../src/config/transform-config.js';
import { resolveAlerts } from '../../../src/alerts/alerts.js';

/** The config's `alerts` (CONTRACT 11): what notify may name, and the defaults. */

const BASE = {
  destinations: {
    slack: { url: 'https://hooks.slack.com/services/T/B/x' },
    ops: { url: 'https://ops.example.com/hooks' },
    queue: { pull: true },
  },
  transforms: { 'issue-to-slack': { code: 'export default (e) => ({ body: { text: e.body.type } })' } },
};

describe('alerts in the config file', () => {
  it('takes destinations by name or with a transform, and fills in the defaults', () => {
    const config = { ...BASE, alerts: { backlogSeconds: 60, notify: ['ops', { to: 'slack', transform: 'issue-to-slack' }] } };
    expect(validateConfig(config)).toEqual([]);
    expect(resolveAlerts(config.alerts)).toEqual({
      backlogSeconds: 60,
      notify: [
        { destination: 'ops', transform: null },
        { destination: 'slack', transform: 'issue-to-slack' },
      ],
    });
    expect(resolveAlerts(undefined)).toEqual({ backlogSeconds: 300, notify: [] });
    // The transform lists the notification route among its users.
    expect(transformUsers(config).get('issue-to-slack')).toEqual([{ source: 'reception:issues', destination: 'slack' }]);
  });

  it('refuses an unknown destination, a pull destination and an unknown transform, naming each', () => {
    const problems = validateConfig({
      ...BASE,
      alerts: { notify: ['slak', 'queue', { to: 'ops', transform: 'issue-to-slak' }, { to: 'nowhere' }] },
    });
    expect(problems).toEqual([
      'alerts.notify[0]: there is no destination "slak" (did you mean "slack"?); destinations are named under "destinations": slack, ops, queue',
      'alerts.notify[1]: "queue" is a pull destination; notifications go to a destination Reception sends to (url, nats, amqp or redis)',
      'alerts.notify[2].transform: there is no transform "issue-to-slak" (did you mean "issue-to-slack"?); transforms are named under "transforms": issue-to-slack',
      'alerts.notify[3].to: there is no destination "nowhere"; destinations are named under "destinations": slack, ops, queue',
    ]);
  });

  it('refuses a bad shape: an unknown key, a backlog of 0 seconds, a notify that is not a list', () => {
    expect(validateConfig({ ...BASE, alerts: { notfy: ['ops'] } })).toEqual([
      'alerts.notfy: unknown key (did you mean "notify"? see docs/config.md)',
    ]);
    expect(validateConfig({ ...BASE, alerts: { backlogSeconds: 0 } })).toEqual([
      expect.stringMatching(/^alerts\.backlogSeconds: .*, got 0$/),
    ]);
    expect(validateConfig({ ...BASE, alerts: { notify: 'ops' } })).toEqual(['alerts.notify: must be array, got "ops"']);
    expect(
      validateConfig({ ...BASE, alerts: { notify: [{ to: 'ops', via: 'x' }, 5, { transform: 'issue-to-slack' }] } }),
    ).toEqual([
      'alerts.notify[0].via: unknown key (check the spelling; see docs/config.md)',
      "alerts.notify[1]: expected a destination's name, or { to: <destination>, transform: <transform> }",
      'alerts.notify[2].to: is required',
    ]);
  });

  it('reserves the source reception:issues', () => {
    expect(validateConfig({ sources: { 'reception:issues': {} } })).toEqual([
      'sources["reception:issues"]: "reception:issues" is reserved for Reception\'s own notifications of issues',
    ]);
  });
});
