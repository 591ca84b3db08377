/**
 * A valid config file in which source `open` forwards to destination `sink`
 * the deliveries whose event type is one of `values` listed values (`evt.0`,
 * `evt.1`, ...) in a `$in`, as a YAML flow list (issue 28). With 200,000
 * values it is about 2 MB, which takes the YAML parser seconds. Shared by `npm run bench:reload` and
 * the reload test (test/process/config-reload.test.ts): it lives in bench/
 * because the bench build (tsconfig.bench.json) compiles src/ and bench/
 * only, and the tests may import from anywhere.
 */
export function largeConfigText(values: number): string {
  const list = Array.from({ length: values }, (_, n) => `evt.${n}`).join(', ');
  return `sources:
  open:
    forward:
      - to: sink
        filter: { eventType: { $in: [${list}] } }
destinations:
  sink: { url: "http://127.0.0.1:9/hook", allowPrivateNetwork: true }
`;
}
