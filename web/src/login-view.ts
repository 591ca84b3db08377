// Logging in: the token is sent once to POST /api/session, which answers with
// an HttpOnly cookie; the page keeps nothing.

import { logIn } from './api.ts';
import { h, replaceChildren } from './dom.ts';

/** Shows the login form in `root`; `onLoggedIn` runs once the cookie is set. */
export function renderLogin(root: HTMLElement, onLoggedIn: () => void): void {
  const input = h('input', {
    attrs: {
      id: 'token',
      name: 'token',
      type: 'password',
      autocomplete: 'current-password',
      required: '',
      spellcheck: 'false',
      placeholder: 'API token',
    },
  });
  const message = h('p', { class: 'login-message', attrs: { role: 'alert' } });
  const submit = h('button', { class: 'button primary', attrs: { type: 'submit' } }, 'Log in');
  const form = h(
    'form',
    { class: 'login-form', attrs: { 'aria-label': 'Log in' } },
    h('h1', {}, 'Reception'),
    h(
      'p',
      { class: 'muted' },
      'Your webhook inbox. Log in with the API token: it is in ',
      h('code', {}, 'data/token'),
      ' (or ',
      h('code', {}, 'RECEPTION_TOKEN'),
      '), and was printed when the server first started.',
    ),
    h('label', { attrs: { for: 'token' } }, 'API token'),
    input,
    submit,
    message,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    message.textContent = '';
    logIn(input.value)
      .then((ok) => {
        if (ok) {
          onLoggedIn();
          return;
        }
        message.textContent = 'That is not the API token.';
        input.select();
      })
      .catch((error: unknown) => {
        message.textContent = `Could not log in: ${(error as Error).message}`;
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  replaceChildren(root, h('main', { class: 'login' }, form));
  input.focus();
}
