// Entry point: log in if needed, then show the inbox.

import './theme.css';
import './layout.css';
import './list.css';
import './detail.css';
import './forwarding.css';
import './transform.css';
import './issues.css';
import { listSources, setUnauthorizedHandler, Unauthorized } from './api.ts';
import { h, replaceChildren } from './dom.ts';
import { InboxView } from './inbox-view.ts';
import { renderLogin } from './login-view.ts';

const root = document.getElementById('app') ?? document.body;
let inbox: InboxView | undefined;

function showLogin(): void {
  inbox?.stop();
  inbox = undefined;
  renderLogin(root, () => void showInbox());
}

async function showInbox(): Promise<void> {
  inbox?.stop();
  const view = new InboxView(root, showLogin);
  inbox = view;
  try {
    await view.start();
  } catch (error) {
    if (error instanceof Unauthorized) return;
    replaceChildren(
      root,
      h(
        'main',
        { class: 'login' },
        h('p', { class: 'error' }, `Reception did not answer: ${(error as Error).message}`),
        h('p', {}, h('a', { attrs: { href: location.pathname } }, 'Try again')),
      ),
    );
  }
}

// Any 401 (logged out in another tab, token changed) brings the login form back.
setUnauthorizedHandler(() => {
  if (inbox !== undefined) showLogin();
});

async function boot(): Promise<void> {
  try {
    // Any read tells whether the session cookie is still good; one source is the smallest.
    await listSources({ limit: 1 });
  } catch (error) {
    if (error instanceof Unauthorized) {
      showLogin();
      return;
    }
  }
  await showInbox();
}

void boot();
