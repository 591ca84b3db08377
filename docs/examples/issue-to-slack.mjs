// A transform that turns Reception's issue events into a Slack message
// (docs/alerts.md "Notifications"): name it in alerts.notify, with a
// destination whose url is a Slack incoming webhook.
//
//   transforms:
//     issue-to-slack: { file: issue-to-slack.mjs }
//   alerts:
//     notify:
//       - { to: slack, transform: issue-to-slack }
//
// The event's body is { type: "issue.opened" | "issue.resolved", issue: { … } }.
export default function (event) {
  const { type, issue } = event.body;
  const opened = type === 'issue.opened';
  const what = `${issue.kind.replaceAll('_', ' ')}: ${issue.subject}`;
  const text = opened
    ? `:rotating_light: Reception: ${what}${issue.lastError ? ` (${issue.lastError})` : ''}`
    : `:white_check_mark: Reception: resolved, ${what} (${issue.count} occurrence${issue.count === 1 ? '' : 's'})`;
  return {
    body: {
      text,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text } },
        {
          type: 'context',
          elements: [{ type: 'mrkdwn', text: `issue ${issue.id} · first ${issue.firstAt} · last ${issue.lastAt}` }],
        },
      ],
    },
  };
}
