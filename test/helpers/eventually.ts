/**
 * Polls `check` (sync or async) every 20 ms until it holds; rejects after
 * `timeoutMs` with `what` (a sentence, or a function that writes one from
 * the state at that moment) or a plain "condition not met". The one way the
 * tests wait for something.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what?: string | (() => string),
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) {
      const said = typeof what === 'function' ? what() : what;
      throw new Error(`${said ?? 'condition not met'} (waited ${timeoutMs} ms)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
