// The transforms API (CONTRACT 10 "Try it") as the page uses it: the list of
// transforms with the routes that name them, read once and kept for a few
// minutes (the config changes only on a reload), and a run on a delivery.

import type { Static } from 'typebox';
import type { TransformRunSchema } from '../../src/api/transform-schemas.js';
import { call } from './api.ts';
import type { TransformInfo } from './transform-routes.ts';

/** What a try answered: an output (null: dropped) or an error, each with the console lines, the time and the version. */
export type TransformRun = Static<typeof TransformRunSchema>;

/** How long the list is kept before it is read again. */
const KEEP_MS = 5 * 60_000;

let kept: { at: number; items: Promise<TransformInfo[]> } | undefined;

/** The transforms in force, read at most once every few minutes (and again after `forgetTransforms`). */
export function listTransforms(now = Date.now()): Promise<TransformInfo[]> {
  if (kept === undefined || now - kept.at > KEEP_MS) {
    const items = call('/api/transforms').then(async (response) => ((await response.json()) as { items: TransformInfo[] }).items);
    // A failed read is not kept: the next detail asks again.
    items.catch(() => {
      if (kept?.items === items) kept = undefined;
    });
    kept = { at: now, items };
  }
  return kept.items;
}

/** The list is read again next time (a run answered with another version: the config was reloaded). */
export function forgetTransforms(): void {
  kept = undefined;
}

/** Runs the transform on the stored delivery; nothing is sent. */
export async function runTransform(name: string, deliveryId: string): Promise<TransformRun> {
  const response = await call(`/api/transforms/${encodeURIComponent(name)}/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ deliveryId }),
  });
  return (await response.json()) as TransformRun;
}
