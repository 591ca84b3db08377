import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { ConfigFileError, loadConfigFile, validateConfig } from '../../src/config/source-config.js';
import { SourceRules } from '../../src/receive/source-rules.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * The config file (CONTRACT 4): the contract's example loads from YAML and
 * from JSON; every bad file is refused with a message that names the bad
 * key, so that a typo can never leave a source silently unverified.
 */

const dir = tempDir('reception-config-');
afterAll(() => dir.remove());

let fileCount = 0;
function file(name: string, text: string): string {
  fileCount += 1;
  const path = join(dir.path, `${fileCount}-${name}`);
  writeFileSync(path, text);
  return path;
}

/** The example of CONTRACT 4 with its "…" filled in. */
const EXAMPLE = {
  strict: false,
  sources: {
    stripe: { verify: { scheme: 'stripe', secrets: ['whsec_abc123'], toleranceSeconds: 300 } },
    github: { verify: { scheme: 'github', secrets: ['old', 'new'] } },
    app: { verify: { scheme: 'standard-webhooks', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } },
    shop: { verify: { scheme: 'shopify', secrets: ['shpss_1'] } },
    slack: { verify: { scheme: 'slack', secrets: ['8f742231b10e8888abcd99yyyzzz85a5'] }, handshake: { type: 'slack' } },
    sms: { verify: { scheme: 'twilio', secrets: ['12345'], publicUrl: 'https://hooks.example.com/api/webhook/sms' } },
    zoom: { verify: { scheme: 'zoom', secrets: ['zoom-secret'] }, handshake: { type: 'zoom' } },
    meta: { verify: { scheme: 'github', secrets: ['app-secret'] }, handshake: { type: 'meta', verifyToken: 'my-token' } },
    graph: { handshake: { type: 'graph' } },
    orders: {
      verify: { scheme: 'hmac', secrets: ['s'], header: 'X-Signature', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
      dedup: { header: 'X-Request-Id' },
    },
    events: { anyJson: true, maxBodyBytes: 1048576, rateLimit: { requests: 100, perSeconds: 1 } },
  },
};

const DEFAULTS = { maxBodyBytes: 5 * 1024 * 1024, anyJson: false };

/** The problems loadConfigFile reports for a file with this text. */
function problemsOf(name: string, text: string): string[] {
  const path = file(name, text);
  try {
    loadConfigFile(path);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    const configError = error as ConfigFileError;
    expect(configError.message).toContain(path);
    for (const problem of configError.problems) expect(configError.message).toContain(problem);
    return configError.problems;
  }
  throw new Error(`${name} was accepted`);
}

/** The problems as the error's message lists them, each with its place (`name:line:column: `) when known. */
function linesOf(name: string, text: string): string[] {
  const path = file(name, text);
  try {
    loadConfigFile(path);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return (error as ConfigFileError).message
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^ {2}- /, '').replaceAll(path, name));
  }
  throw new Error(`${name} was accepted`);
}

const yaml = (data: unknown): string => toYaml(data);
const oneSource = (source: unknown): string => JSON.stringify({ sources: { src: source } });

describe('a valid config file', () => {
  it.each([
    ['YAML', 'reception.yaml', yaml(EXAMPLE)],
    ['JSON', 'reception.json', JSON.stringify(EXAMPLE, null, 2)],
  ])('loads the example of the contract from %s, and every rule builds', (_kind, name, text) => {
    const config = loadConfigFile(file(name, text));
    expect(config).toEqual(EXAMPLE);
    const rules = SourceRules.fromConfig(config, DEFAULTS);
    expect(rules.strict).toBe(false);
    expect(rules.configuredSources.sort()).toEqual(Object.keys(EXAMPLE.sources).sort());
    expect(rules.forSource('stripe')?.verifier?.scheme).toBe('stripe');
    expect(rules.forSource('app')?.verifier?.scheme).toBe('standard-webhooks');
    expect(rules.forSource('orders')?.dedupHeader).toBe('x-request-id');
    expect(rules.forSource('meta')?.handshake).toEqual({ type: 'meta', verifyToken: 'my-token' });
    expect(rules.forSource('events')?.policy).toEqual({ maxBodyBytes: 1048576, anyJson: true });
    expect(rules.forSource('events')?.rateLimiter).toBeDefined();
    expect(rules.forSource('graph')?.verifier).toBeUndefined();
    // An unnamed source gets the defaults, as without a file.
    expect(rules.forSource('anything')).toEqual({ policy: DEFAULTS, accept: ['json', 'form'], onFailure: 'reject', routes: [] });
  });

  it('takes YAML written by hand, comments and all; an empty file means no rules', () => {
    const config = loadConfigFile(
      file(
        'hand.yml',
        [
          '# Reception sources',
          'strict: true',
          'sources:',
          '  github:',
          '    verify: { scheme: github, secrets: [s3cret] }',
          '    onFailure: keep',
          '',
        ].join('\n'),
      ),
    );
    expect(config).toEqual({
      strict: true,
      sources: { github: { verify: { scheme: 'github', secrets: ['s3cret'] }, onFailure: 'keep' } },
    });
    const rules = SourceRules.fromConfig(config, DEFAULTS);
    expect(rules.forSource('github')?.onFailure).toBe('keep');
    expect(rules.forSource('other')).toBeUndefined();
    expect(loadConfigFile(file('empty.yaml', ''))).toEqual({});
  });

  it('treats a source named __proto__ as a source like any other, never as a prototype', () => {
    const config = loadConfigFile(file('proto.json', '{"sources":{"__proto__":{"verify":{"scheme":"github","secrets":["x"]}}}}'));
    expect(Object.getPrototypeOf(config.sources)).toBe(Object.prototype);
    expect(SourceRules.fromConfig(config, DEFAULTS).forSource('__proto__')?.verifier?.scheme).toBe('github');
    expect(problemsOf('proto-bad.json', '{"sources":{"__proto__":{"verify":{"scheme":"nope","secrets":["x"]}}}}')).toEqual([
      expect.stringMatching(/^sources\.__proto__\.verify\.scheme: expected one of .*got "nope"$/),
    ]);
  });
});

describe('a bad config file is refused, naming the key', () => {
  it('an unknown scheme is an error, never a source left unverified', () => {
    const problems = problemsOf('scheme.json', oneSource({ verify: { scheme: 'stripee', secrets: ['x'] } }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^sources\.src\.verify\.scheme: expected one of "stripe", "github", .*"hmac", got "stripee"; did you mean "stripe"\?$/,
    );
  });

  it('an unknown handshake type', () => {
    expect(problemsOf('handshake.yaml', yaml({ sources: { src: { handshake: { type: 'teams' } } } }))).toEqual([
      expect.stringMatching(
        /^sources\.src\.handshake\.type: expected one of "slack", "meta", "zoom", "graph", "x", got "teams"$/,
      ),
    ]);
  });

  it('an unknown key, at any depth', () => {
    expect(problemsOf('top.json', '{"strict": true, "sourcez": {}}')).toEqual([expect.stringMatching(/^sourcez: unknown key/)]);
    expect(problemsOf('source.json', oneSource({ verfy: { scheme: 'github', secrets: ['x'] } }))).toEqual([
      expect.stringMatching(/^sources\.src\.verfy: unknown key/),
    ]);
    expect(problemsOf('verify.json', oneSource({ verify: { scheme: 'github', secret: 'x' } }))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^sources\.src\.verify\.secret: unknown key/),
        'sources.src.verify.secrets: is required',
      ]),
    );
  });

  it('twilio without publicUrl, or with one that carries its own query', () => {
    expect(problemsOf('twilio.json', oneSource({ verify: { scheme: 'twilio', secrets: ['t'] } }))).toEqual([
      expect.stringMatching(/^sources\.src\.verify\.publicUrl: the twilio scheme needs the public URL/),
    ]);
    expect(
      problemsOf(
        'twilio-query.json',
        oneSource({ verify: { scheme: 'twilio', secrets: ['t'], publicUrl: 'https://a.example/hook?x=1' } }),
      ),
    ).toEqual([expect.stringMatching(/^sources\.src\.verify\.publicUrl: .*query/)]);
  });

  it('hmac without header; options a scheme does not take', () => {
    expect(problemsOf('hmac.json', oneSource({ verify: { scheme: 'hmac', secrets: ['s'] } }))).toEqual([
      expect.stringMatching(/^sources\.src\.verify\.header: the hmac scheme needs/),
    ]);
    expect(
      problemsOf('hmac-alg.json', oneSource({ verify: { scheme: 'hmac', secrets: ['s'], header: 'X-Sig', algorithm: 'md5' } })),
    ).toEqual([
      expect.stringMatching(/^sources\.src\.verify\.algorithm: expected one of "sha1", "sha256", "sha512", got "md5"$/),
    ]);
    expect(
      problemsOf('github-header.json', oneSource({ verify: { scheme: 'github', secrets: ['s'], header: 'X-Sig' } })),
    ).toEqual([expect.stringMatching(/^sources\.src\.verify\.header: only the hmac scheme/)]);
  });

  it('meta without verifyToken, x without secret, zoom handshake without any secret', () => {
    expect(problemsOf('meta.json', oneSource({ handshake: { type: 'meta' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.verifyToken: the meta handshake needs/),
    ]);
    expect(problemsOf('x.json', oneSource({ handshake: { type: 'x' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.secret: the x handshake needs/),
    ]);
    expect(problemsOf('zoom.json', oneSource({ handshake: { type: 'zoom' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.secret: the zoom handshake needs/),
    ]);
  });

  it('handshake options that its type does not take', () => {
    expect(problemsOf('slack-secret.json', oneSource({ handshake: { type: 'slack', secret: 's' } }))).toEqual([
      expect.stringMatching(
        /^sources\.src\.handshake\.secret: only the x and zoom handshakes take "secret" \(Slack's signing secret goes under verify\)$/,
      ),
    ]);
    expect(problemsOf('graph-secret.json', oneSource({ handshake: { type: 'graph', secret: 's' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.secret: only the x and zoom handshakes/),
    ]);
    expect(problemsOf('x-token.json', oneSource({ handshake: { type: 'x', secret: 's', verifyToken: 't' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.verifyToken: only the meta handshake/),
    ]);
    expect(problemsOf('meta-secret.json', oneSource({ handshake: { type: 'meta', verifyToken: 't', secret: 's' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.handshake\.secret: only the x and zoom handshakes/),
    ]);
    expect(validateConfig({ sources: { src: { handshake: { type: 'zoom', secret: 's' } } } })).toEqual([]);
  });

  it('a dedup header that no request could carry, which would never match', () => {
    for (const header of ['bad header', 'X-Id:', 'X-\u00cfd', '']) {
      expect(problemsOf('dedup.json', oneSource({ dedup: { header } })), header).toEqual([
        expect.stringMatching(/^sources\.src\.dedup\.header: /),
      ]);
    }
    expect(() => loadConfigFile(file('dedup-ok.json', oneSource({ dedup: { header: 'X-Request-Id' } })))).not.toThrow();
  });

  it('a bad rateLimit', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ requests: 0, perSeconds: 1 }, /^sources\.src\.rateLimit\.requests: must be >= 1, got 0$/],
      [{ requests: 1.5, perSeconds: 1 }, /^sources\.src\.rateLimit\.requests: .*integer.*got 1\.5$/],
      [{ requests: 10, perSeconds: 0 }, /^sources\.src\.rateLimit\.perSeconds: must be >= 0\.001, got 0$/],
      [{ requests: 1, perSeconds: 1e-320 }, /^sources\.src\.rateLimit\.perSeconds: must be >= 0\.001, got 1e-320$/],
      [{ requests: 1e12, perSeconds: 1 }, /^sources\.src\.rateLimit\.requests: must be <= 1000000000, got 1000000000000$/],
      [{ requests: 1, perSeconds: 1e30 }, /^sources\.src\.rateLimit\.perSeconds: must be <= 31536000, got 1e\+30$/],
      [{ requests: 10 }, /^sources\.src\.rateLimit\.perSeconds: is required$/],
      [{ requests: 10, perSeconds: 1, burst: 5 }, /^sources\.src\.rateLimit\.burst: unknown key/],
      ['100/s', /^sources\.src\.rateLimit: .*object.*got "100\/s"$/],
    ];
    for (const [rateLimit, expected] of cases) {
      expect(problemsOf('rate.json', oneSource({ rateLimit })), JSON.stringify(rateLimit)).toEqual([
        expect.stringMatching(expected),
      ]);
    }
  });

  it('other bad values: empty secrets, a negative maxBodyBytes, an unknown onFailure, keep without verify, a bad secret', () => {
    expect(problemsOf('secrets.json', oneSource({ verify: { scheme: 'github', secrets: [] } }))).toEqual([
      expect.stringMatching(/^sources\.src\.verify\.secrets: /),
    ]);
    expect(problemsOf('max.json', oneSource({ maxBodyBytes: -1 }))).toEqual([
      expect.stringMatching(/^sources\.src\.maxBodyBytes: must be >= 1/),
    ]);
    expect(problemsOf('fail.json', oneSource({ verify: { scheme: 'github', secrets: ['s'] }, onFailure: 'drop' }))).toEqual([
      expect.stringMatching(/^sources\.src\.onFailure: expected one of "reject", "keep", got "drop"$/),
    ]);
    expect(problemsOf('keep.json', oneSource({ onFailure: 'keep' }))).toEqual([
      expect.stringMatching(/^sources\.src\.onFailure: "keep" only means/),
    ]);
    expect(
      problemsOf('whsec.json', oneSource({ verify: { scheme: 'standard-webhooks', secrets: ['whsec_not base64!'] } })),
    ).toEqual([expect.stringMatching(/^sources\.src\.verify\.secrets\[0\]: /)]);
  });

  it('an eventType setting that names both or neither place, a bad header or path, or one its scheme would not read', () => {
    expect(problemsOf('both.json', oneSource({ eventType: { header: 'X-Event', body: 'type' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.eventType: name either a header .* or a body field/),
    ]);
    expect(problemsOf('neither.json', oneSource({ eventType: {} }))).toEqual([
      expect.stringMatching(/^sources\.src\.eventType: name either/),
    ]);
    expect(problemsOf('header.json', oneSource({ eventType: { header: 'X Event' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.eventType\.header: /),
    ]);
    expect(problemsOf('path.json', oneSource({ eventType: { body: 'data..kind' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.eventType\.body: /),
    ]);
    expect(problemsOf('unknown.json', oneSource({ eventType: { field: 'type' } }))).toEqual([
      expect.stringMatching(/^sources\.src\.eventType\.field: unknown key/),
    ]);
    expect(
      problemsOf('stripe.json', oneSource({ verify: { scheme: 'stripe', secrets: ['whsec_x'] }, eventType: { body: 'kind' } })),
    ).toEqual([expect.stringMatching(/^sources\.src\.eventType: the stripe scheme says where the event type is/)]);
    const fine = oneSource({ verify: { scheme: 'hmac', secrets: ['s'], header: 'X-Sig' }, eventType: { header: 'X-Event' } });
    expect(loadConfigFile(file('fine.json', fine)).sources?.src?.eventType).toEqual({ header: 'X-Event' });
  });

  it('a file that is not an object, or whose sources or source is not one', () => {
    for (const text of ['[]', '"sources"', '42', '- a\n- b\n']) {
      expect(problemsOf('not-object.yaml', text)).toEqual([expect.stringMatching(/^\(top level\): expected an object/)]);
    }
    expect(problemsOf('sources-list.yaml', 'sources: [stripe, github]\n')).toEqual([
      expect.stringMatching(/^sources: expected an object/),
    ]);
    expect(problemsOf('source-string.json', '{"sources":{"stripe":"whsec_x"}}')).toEqual([
      expect.stringMatching(/^sources\.stripe: /),
    ]);
    expect(problemsOf('strict.json', '{"strict":"yes"}')).toEqual([expect.stringMatching(/^strict: .*boolean/)]);
  });

  it('a source name that could never be received', () => {
    expect(problemsOf('name.json', '{"sources":{"a/b":{}}}')).toEqual([
      expect.stringMatching(/^sources\["a\/b"\]: "a\/b" is not a valid source name/),
    ]);
    // A name that would not read as one key is quoted in the key path.
    expect(problemsOf('dots.json', '{"sources":{"..":{}}}')).toEqual([
      expect.stringMatching(/^sources\["\.\."\]: "\.\." is not a valid source name/),
    ]);
    expect(problemsOf('dotted.json', '{"sources":{"my.app":{"verify":{"scheme":"stripe"}}}}')).toEqual([
      'sources["my.app"].verify.secrets: is required',
    ]);
  });

  it('a source name with terminal controls is shown escaped, in the message and in the key path', () => {
    const problems = problemsOf('esc.json', JSON.stringify({ sources: { '\u001b[31mred\u001b]0;pwned\u0007\u009b\u202e': {} } }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('"\\u001b[31mred\\u001b]0;pwned\\u0007\\u009b\\u202e" is not a valid source name');
    // eslint-disable-next-line no-control-regex
    expect(problems[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/u);
  });

  it('unknown keys whose values are YAML aliases of themselves', () => {
    // TypeBox reports these unknown keys in another shape than plain ones.
    const levels = ['a: &a [*a, *a]'];
    for (const [name, previous] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
      ['f', 'e'],
      ['g', 'f'],
    ] as const) {
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    levels.push(`h: [${Array(9).fill('*g').join(', ')}]`);
    const problems = problemsOf('aliases.yaml', `${levels.join('\n')}\n`);
    expect(problems).toEqual(
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((key) => `${key}: unknown key (check the spelling; see docs/config.md)`),
    );
  });

  it('invalid YAML and JSON, at the place to fix, as file:line:column', () => {
    expect(linesOf('broken.yaml', 'sources:\n  stripe: [\n')).toEqual([
      'broken.yaml:2:11: the file is not valid YAML or JSON: a "[" that is not closed with "]" (noticed at line 3, column 1)',
    ]);
    expect(linesOf('broken.json', '{"sources": {"stripe": {}')).toEqual([
      'broken.json:1:13: the file is not valid YAML or JSON: a "{" that is not closed with "}" (noticed at line 1, column 26)',
    ]);
    // The brace opened on line 3 is the mistake; the parser notices it only at the next key, a line below.
    expect(
      linesOf('brace.yaml', 'sources:\n  stripe:\n    verify: { scheme: stripe, secrets: [whsec_x]\n  github: {}\n'),
    ).toEqual([
      'brace.yaml:3:13: the file is not valid YAML or JSON: a "{" that is not closed with "}" (noticed at line 4, column 3)',
    ]);
    expect(linesOf('tab.yaml', 'sources:\n  a: {}\n\tb: {}\n')).toEqual([
      'tab.yaml:3:1: the file is not valid YAML or JSON: a tab as indentation (YAML takes spaces only)',
    ]);
  });

  it('a bad key or value is listed at its place in the file: the key, or the nearest key above a missing one', () => {
    const text = [
      'destinations:',
      '  app: { url: "https://app.example/hooks" }',
      'sources:',
      '  stripe:',
      '    verify: { scheme: stripee, secrets: [whsec_x] }',
      '  github:',
      '    verfy: {}',
      '  sms:',
      '    verify: { scheme: twilio, secrets: [x] }',
      '  "a b":',
      '    forward: [{ to: app }, { to: nowhere }]',
      '',
    ].join('\n');
    const lines = linesOf('places.yaml', text);
    expect(lines).toContain(
      'places.yaml:5:15: sources.stripe.verify.scheme: expected one of "stripe", "github", "standard-webhooks", "shopify", "slack", "twilio", "zoom", "hmac", got "stripee"; did you mean "stripe"?',
    );
    expect(lines).toContain('places.yaml:7:5: sources.github.verfy: unknown key (did you mean "verify"? see docs/config.md)');
    expect(lines).toContain(
      'places.yaml:9:5: sources.sms.verify.publicUrl: the twilio scheme needs the public URL Twilio posts to',
    );
    expect(lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^places\.yaml:11:30: sources\["a b"\]\.forward\[1\]\.to: /)]),
    );
  });

  it('duplicate keys, in YAML and in JSON, instead of the last one silently winning', () => {
    const yamlText = 'sources:\n  github:\n    verify: { scheme: github, secrets: [a] }\n  github: {}\n';
    expect(problemsOf('dup.yaml', yamlText)).toEqual(['sources.github: the key is there twice (again at line 4, column 3)']);
    expect(problemsOf('dup.json', '{"sources": {"a b": {"anyJson": true, "anyJson": false}}}')).toEqual([
      'sources["a b"].anyJson: the key is there twice (again at line 1, column 39)',
    ]);
  });

  it('never quotes a secret: not a wrong-typed one, not one on a line the parser refuses', () => {
    const secret = 'whsec_TOPSECRET-LEAK';
    const problems = [
      ...problemsOf('type.yaml', `sources:\n  a:\n    verify: { scheme: stripe, secrets: "${secret}" }\n`),
      ...problemsOf('items.yaml', `sources:\n  a:\n    verify: { scheme: github, secrets: [7, "${secret}"] }\n`),
      ...problemsOf('token.yaml', `sources:\n  a:\n    handshake: { type: meta, verifyToken: 12345678 }\n`),
      ...problemsOf('syntax.yaml', `sources:\n  a:\n    verify: { scheme: stripe, secrets: ["${secret}" }\n`),
      ...problemsOf(
        'dup.yaml',
        `sources:\n  a:\n    verify: { scheme: stripe, secrets: ["${secret}"], secrets: ["${secret}"] }\n`,
      ),
    ];
    expect(problems.length).toBeGreaterThanOrEqual(5);
    for (const problem of problems) {
      expect(problem).not.toContain('TOPSECRET');
      expect(problem).not.toContain('12345678');
    }
    expect(problems[0]).toMatch(
      /^sources\.a\.verify\.secrets: .*got a string of 20 characters \(not shown: it may be a secret\)$/,
    );
  });

  it('never quotes a secret typed where an object belongs, in a URL, or as a YAML tag', () => {
    const secret = 'whsec_TOPSECRET-LEAK';
    const problems = [
      ...problemsOf('verify-string.yaml', `sources:\n  a:\n    verify: ${secret}\n`),
      ...problemsOf('source-string.yaml', `sources:\n  a: ${secret}\n`),
      ...problemsOf('handshake-string.yaml', `sources:\n  a:\n    handshake: ${secret}\n`),
      ...problemsOf('url.yaml', `sources:\n  a:\n    verify: { scheme: twilio, secrets: [x], publicUrl: 7 }\n`),
      ...problemsOf('tag.yaml', `sources:\n  a:\n    verify:\n      scheme: github\n      secrets:\n        - !TOPSECRET-LEAK\n`),
      // A source whose name is also a setting's (type, header...) is no setting.
      ...problemsOf('named-type.yaml', `sources:\n  type: ${secret}\n  header: ["${secret}"]\n`),
    ];
    expect(problems).toHaveLength(7);
    for (const problem of problems) expect(problem).not.toContain('TOPSECRET');
    expect(problems[0]).toMatch(/^sources\.a\.verify: .*got a string of 20 characters \(not shown: it may be a secret\)$/);
    expect(problems[4]).toBe(
      'the file is not valid YAML or JSON: an unknown tag; a value that begins with one of * & ! | > % @ ` { [ must be quoted',
    );
    expect(
      linesOf('tag.yaml', `sources:\n  a:\n    verify:\n      scheme: github\n      secrets:\n        - !TOPSECRET-LEAK\n`)[0],
    ).toMatch(/^tag\.yaml:6:11: /);
  });

  it('never quotes a secret on a line that is not YAML: an alias, a block scalar header, a tag', () => {
    const files: Array<[string, string, string]> = [
      [
        'alias.yaml',
        'sources:\n  m:\n    handshake: { type: meta, verifyToken: *TOPSECRET-LEAK }\n',
        'line 3, column 43: an alias',
      ],
      [
        'folded.yaml',
        'sources:\n  g:\n    verify: { scheme: github, secrets: [ >TOPSECRET-LEAK ] }\n',
        'line 3, column 42: a value that YAML cannot start with',
      ],
      [
        'literal.yaml',
        'sources:\n  g:\n    verify:\n      scheme: github\n      secrets:\n        - |TOPSECRET-LEAK\n',
        'line 6, column 12: something YAML did not expect',
      ],
      [
        'tags.yaml',
        'sources:\n  m:\n    handshake: { type: meta, verifyToken: !my!TOPSECRET-LEAK }\n',
        'line 3, column 43: an unknown tag',
      ],
    ];
    for (const [file, text, where] of files) {
      const [line, column, what] = /^line (\d+), column (\d+): (.*)$/.exec(where)?.slice(1) ?? [];
      const lines = linesOf(file, text);
      expect(lines, file).toEqual([
        expect.stringContaining(`${file}:${line}:${column}: the file is not valid YAML or JSON: ${what}`),
      ]);
      expect(lines.join('\n'), file).not.toContain('TOPSECRET');
    }
  });

  it('never names a key that may be a secret: unknown keys inside verify or handshake, any key inside a secret setting', () => {
    const problems = [
      ...problemsOf('flow.yaml', 'sources:\n  s:\n    verify: {scheme: github, secrets: [a], TOPSECRET-LEAK}\n'),
      ...problemsOf(
        'block.yaml',
        'sources:\n  s:\n    handshake:\n      type: meta\n      verifyToken: t\n      TOPSECRET-LEAK:\n',
      ),
      ...problemsOf('map.yaml', 'sources:\n  s:\n    verify: {scheme: github, secrets: {TOPSECRET-LEAK, TOPSECRET-LEAK}}\n'),
      ...problemsOf(
        'near.yaml',
        'sources:\n  s:\n    verify:\n      scheme: github\n      secrets:\n        secretz: 1\n        secretz: 2\n',
      ),
    ];
    expect(problems).toEqual([
      'sources.s.verify: an unknown key of 14 characters (not shown: it may be a secret; the settings here are scheme, secrets, toleranceSeconds, publicUrl, header, algorithm, encoding, prefix)',
      'sources.s.handshake: an unknown key of 14 characters (not shown: it may be a secret; the settings here are type, verifyToken, secret)',
      'sources.s.verify.secrets (a key inside, not shown: it may be a secret): the key is there twice (again at line 3, column 56)',
      'sources.s.verify.secrets (a key inside, not shown: it may be a secret): the key is there twice (again at line 7, column 9)',
    ]);
  });

  it('prefers a setting of the place itself, and says so of a setting that belongs elsewhere', () => {
    // `secret` is a setting (of the X handshake), but under verify it is a slip for `secrets`, and the other way round.
    expect(problemsOf('secret.json', oneSource({ verify: { scheme: 'github', secret: ['x'] } }))).toEqual([
      'sources.src.verify.secrets: is required',
      'sources.src.verify.secret: unknown key (did you mean "secrets"? see docs/config.md)',
    ]);
    expect(problemsOf('x.json', oneSource({ handshake: { type: 'x', secrets: ['x'] } }))).toContain(
      'sources.src.handshake.secrets: unknown key (did you mean "secret"? see docs/config.md)',
    );
    expect(problemsOf('placed.json', oneSource({ verify: { scheme: 'github', secrets: ['x'], anyJson: true } }))).toEqual([
      'sources.src.verify.anyJson: not a setting of this place; the settings here are scheme, secrets, toleranceSeconds, publicUrl, header, algorithm, encoding, prefix (see docs/config.md)',
    ]);
  });

  it('names a misspelt setting with the setting meant, escaped for a terminal, and no key that looks like a secret, at any level', () => {
    expect(problemsOf('typo.json', oneSource({ verify: { scheme: 'github', secrets: ['x'], secrts: ['y'] } }))).toEqual([
      'sources.src.verify.secrts: unknown key (did you mean "secrets"? see docs/config.md)',
    ]);
    expect(problemsOf('escape.json', oneSource({ 'anyJso\u0007': true }))).toEqual([
      'sources.src["anyJso\\u0007"]: unknown key (did you mean "anyJson"? see docs/config.md)',
    ]);
    const secret = 'whsec_REALSECRET_XYZ';
    const problems = [
      ...problemsOf('top.json', JSON.stringify({ sources: {}, [secret]: true })),
      ...problemsOf('source.json', oneSource({ [secret]: true })),
      ...problemsOf('dedup.json', oneSource({ dedup: { header: 'X-Id', [secret]: 1 } })),
      ...problemsOf('flow.yaml', `sources:\n  stripe: { verify: { scheme: stripe, secrets: [whsec_a] }, ${secret} }\n`),
    ];
    expect(problems).toEqual([
      '(top level): an unknown key of 20 characters (not shown: it may be a secret; the settings here are strict, sources, destinations, transforms, alerts)',
      'sources.src: an unknown key of 20 characters (not shown: it may be a secret; the settings here are verify, handshake, dedup, anyJson, maxBodyBytes, rateLimit, onFailure, forward, accept, response, eventType)',
      'sources.src.dedup: an unknown key of 20 characters (not shown: it may be a secret; the settings here are header)',
      'sources.stripe: an unknown key of 20 characters (not shown: it may be a secret; the settings here are verify, handshake, dedup, anyJson, maxBodyBytes, rateLimit, onFailure, forward, accept, response, eventType)',
    ]);
    expect(problems.join('\n')).not.toContain('REALSECRET');
  });

  it('refuses an anchor or alias without a name, which YAML would drop silently', () => {
    expect(linesOf('anchor.yaml', 'sources:\n  m:\n    handshake: { type: meta, verifyToken: & tok3n }\n')).toEqual([
      expect.stringMatching(
        /^anchor\.yaml:3:43: the file is not valid YAML or JSON: an anchor \("&"\) or alias \("\*"\) without a name/,
      ),
    ]);
  });

  it('a file that cannot be read', () => {
    expect(() => loadConfigFile(join(dir.path, 'missing.yaml'))).toThrow(
      /^cannot read the config file .*missing\.yaml:\n {2}- there is no such file: check the path \(ENOENT\)$/,
    );
    expect(() => loadConfigFile(dir.path)).toThrow(
      /^cannot read the config file .*:\n {2}- it is a directory: name the file itself \(EISDIR\)$/,
    );
  });

  it('reports the rules and names of sources of the right shape beside the shape problems of others', () => {
    const problems = validateConfig({
      strict: 'yes',
      sources: {
        'a/b': {},
        shapeless: { verify: { scheme: 'github', secrets: 'x' } },
        slack: { verify: { scheme: 'slack', secrets: ['x'] }, handshake: { type: 'slack', secret: 'y' } },
        meta: { handshake: { type: 'meta' } },
      },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^strict: /),
      expect.stringMatching(/^sources\["a\/b"\]: "a\/b" is not a valid source name/),
      expect.stringMatching(/^sources\.shapeless\.verify\.secrets: /),
      expect.stringMatching(/^sources\.slack\.handshake\.secret: only the x and zoom handshakes/),
      expect.stringMatching(/^sources\.meta\.handshake\.verifyToken: the meta handshake needs/),
    ]);
  });

  it('reports every problem of every source at once', () => {
    const problems = validateConfig({
      strict: 1,
      sources: {
        one: { verify: { scheme: 'nope', secrets: ['x'] } },
        two: { handshake: { type: 'meta' }, rateLimit: { requests: 0, perSeconds: 1 } },
      },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^strict: /),
        expect.stringMatching(/^sources\.one\.verify\.scheme: /),
        expect.stringMatching(/^sources\.two\.rateLimit\.requests: /),
      ]),
    );
  });
});
