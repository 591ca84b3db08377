/**
 * Races `work` against the abort signal (Reception shutting down, after the
 * grace): `aborted` when the signal won. The listener is removed either way.
 */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | 'aborted'> {
  if (signal.aborted) return 'aborted';
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}
