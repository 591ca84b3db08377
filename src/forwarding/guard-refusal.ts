import { GUARD_ERROR_CODE } from './network-guard.js';

/**
 * The private-network guard's refusal, if that is what the error is (or was
 * caused by): an attempt it refuses can never succeed until the config
 * changes, so it is not retried (CONTRACT 6, "What can never succeed fails
 * at once").
 */
export function guardRefusal(error: unknown): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if ((current as { code?: unknown }).code === GUARD_ERROR_CODE) return current;
    current = current.cause;
  }
  return undefined;
}
