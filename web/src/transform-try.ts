// "Try a transform" in a delivery's detail (CONTRACT 10 "Try it"): for each
// route of the delivery's source that has a transform, a button that runs
// that transform on this delivery (POST /api/transforms/{name}/run; nothing
// is sent) and shows what it answered under it (transform-result.ts). The
// routes come from GET /api/transforms, read once every few minutes, not per
// delivery (transforms-api.ts). A source without such a route has no section.

import { Unauthorized, type Delivery } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { transformResult } from './transform-result.ts';
import { routesOf, type TransformInfo, type TransformRoute } from './transform-routes.ts';
import { forgetTransforms, listTransforms, runTransform } from './transforms-api.ts';

/**
 * The section, hidden until the list of transforms says this delivery's
 * source has a route with one; `data-routes` then tells how many (0: it
 * stays hidden).
 */
export function transformTrySection(delivery: Delivery): HTMLElement {
  const list = h('div', { class: 'transform-routes' });
  const section = h(
    'section',
    { class: 'detail-section transform-try', attrs: { 'aria-label': 'Try a transform', hidden: '' } },
    h('div', { class: 'section-head' }, h('h3', {}, 'Try a transform')),
    h('p', { class: 'muted transform-note' }, "Runs the route's transform on this delivery; nothing is sent."),
    list,
  );
  void listTransforms().then(
    (transforms) => {
      const routes = routesOf(transforms, delivery.source);
      section.dataset.routes = String(routes.length);
      if (routes.length === 0) return;
      replaceChildren(list, ...routes.map((route) => routeItem(delivery, route, transforms)));
      section.hidden = false;
    },
    () => {
      // Not offered when the list cannot be read (a 401 shows the login form by itself).
      section.dataset.routes = '0';
    },
  );
  return section;
}

function routeItem(delivery: Delivery, route: TransformRoute, transforms: readonly TransformInfo[]): HTMLElement {
  const listed = transforms.find((t) => t.name === route.transform)?.version;
  const result = h('div', { class: 'transform-result-area', attrs: { 'aria-live': 'polite' } });
  const label = `Try ${route.transform} (to ${route.destination})`;
  const run = async (): Promise<void> => {
    tryButton.disabled = true;
    replaceChildren(result, h('p', { class: 'muted' }, 'Running…'));
    try {
      const answer = await runTransform(route.transform, delivery.id);
      // Another version than the list's: the config was reloaded, so the routes are read again next time.
      if (answer.version !== listed) forgetTransforms();
      replaceChildren(result, transformResult(route.transform, answer));
    } catch (error) {
      if (error instanceof Unauthorized) {
        replaceChildren(result); // the login form takes over
        return;
      }
      if (!(error instanceof TypeError)) forgetTransforms(); // a 404: the transform is gone since the list was read
      replaceChildren(
        result,
        h('p', { class: 'error transform-problem' }, `Could not run ${route.transform}: ${(error as Error).message}`),
      );
    } finally {
      tryButton.disabled = false;
    }
  };
  const tryButton = button(label, () => void run(), 'button transform-try-button', {
    'data-action': 'try-transform',
    'data-transform': route.transform,
    'data-destination': route.destination,
  });
  return h(
    'div',
    { class: 'transform-route', attrs: { 'data-transform': route.transform, 'data-destination': route.destination } },
    tryButton,
    result,
  );
}
