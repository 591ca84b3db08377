// What the inbox API answers (CONTRACT 3), as the page reads it. Types only,
// with no DOM in them, so that Node-side tests can import them too.

export interface Verification {
  status: 'verified' | 'failed' | 'none';
  scheme?: string;
  reason?: string;
}

export interface Delivery {
  id: string;
  seq: number;
  source: string;
  receivedAt: string;
  method: string;
  query: string;
  contentType: string;
  size: number;
  remoteAddress: string;
  headers: Array<[string, string]>;
  body: unknown;
  verification: Verification;
  /** Where it is forwarded and how far each got (CONTRACT 6); [] when nowhere. */
  forwards?: ForwardSummary[];
}

export type ForwardStatus = 'pending' | 'delivering' | 'succeeded' | 'failed' | 'cancelled';

export interface ForwardSummary {
  destination: string;
  status: ForwardStatus;
}

export interface DeliveryPage {
  items: Delivery[];
  nextCursor: string | null;
}

export interface SourceSummary {
  source: string;
  count: number;
  lastReceivedAt: string;
}

/** A page of `GET /api/sources`: by name, `nextCursor` null on the last page. */
export interface SourcePage {
  items: SourceSummary[];
  nextCursor: string | null;
}
