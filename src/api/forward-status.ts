/**
 * The states of a forward (CONTRACT 6), in a leaf that imports nothing: the
 * API's schemas build on it, and the web page derives its types from those
 * schemas, so nothing Node-only may come along with it.
 */
export const FORWARD_STATUSES = ['pending', 'delivering', 'succeeded', 'failed', 'cancelled'] as const;

export type ForwardStatus = (typeof FORWARD_STATUSES)[number];
