// What the inbox API answers (CONTRACT 3), as the page reads it: derived from
// the API's own schemas, so that a change there breaks this compile. Types
// only (the imports are erased: no server code reaches the page's bundle),
// with no DOM in them, so that Node-side tests can import them too.

import type { Static } from 'typebox';
import type {
  CountSchema,
  DeliveryPageSchema,
  DeliverySchema,
  EventTypeListSchema,
  SourceListSchema,
  VerificationSchema,
} from '../../src/api/schemas.js';

export type Verification = Static<typeof VerificationSchema>;

/** One delivery; `forwards` says where it is forwarded and how far each got (CONTRACT 6), [] when nowhere. */
export type Delivery = Static<typeof DeliverySchema>;

export type ForwardSummary = Delivery['forwards'][number];

export type ForwardStatus = ForwardSummary['status'];

export type DeliveryPage = Static<typeof DeliveryPageSchema>;

/** A page of `GET /api/sources`: by name, `nextCursor` null on the last page. */
export type SourcePage = Static<typeof SourceListSchema>;

export type SourceSummary = SourcePage['items'][number];

/** `GET /api/event-types`: deliveries per source and event type. */
export type EventTypeList = Static<typeof EventTypeListSchema>;

/** `GET /api/deliveries/count`. */
export type DeliveryCount = Static<typeof CountSchema>;
