// Which routes of a delivery's source have a transform, from GET
// /api/transforms (CONTRACT 10): the buttons of "Try a transform". No DOM
// here, so that Node-side tests import it.

import type { Static } from 'typebox';
import type { TransformListSchema } from '../../src/api/transform-schemas.js';

/** One transform: its version, its limits, and the routes (`source`, `destination`) that name it. */
export type TransformInfo = Static<typeof TransformListSchema>['items'][number];

/** A route of a source that has a transform. */
export interface TransformRoute {
  transform: string;
  destination: string;
}

/** The routes of `source` that have a transform, by transform then destination, each pair once. */
export function routesOf(transforms: readonly TransformInfo[], source: string): TransformRoute[] {
  const routes = new Map<string, TransformRoute>();
  for (const { name, usedBy } of transforms) {
    for (const user of usedBy) {
      if (user.source !== source) continue;
      routes.set(JSON.stringify([name, user.destination]), { transform: name, destination: user.destination });
    }
  }
  return [...routes.values()].sort((a, b) =>
    a.transform === b.transform ? compare(a.destination, b.destination) : compare(a.transform, b.transform),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
