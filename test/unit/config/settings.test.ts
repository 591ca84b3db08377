import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../../src/platform/config/settings.js';
import { SETTINGS } from '../../../src/platform/config/settings-table.js';
import { TrustedProxies } from '../../../src/platform/http/remote-address.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('loadSettings', () => {
  it('has a default for everything', () => {
    expect(loadSettings({})).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: resolve('./data'),
      token: undefined,
      configFile: undefined,
      databaseUrl: undefined,
      databaseSchema: 'public',
      databasePoolSize: 10,
      durability: 'full',
      retentionMs: undefined,
      refusalsKeep: 10_000,
      refusalsKeepTotal: 100_000,
      refusalsRetentionMs: 7 * 86_400_000,
      trustedProxies: [],
      redactHeaders: ['authorization', 'cookie', 'proxy-authorization'],
      maxBodyBytes: 5 * 1024 * 1024,
      logLevel: 'info',
      requestTimeoutMs: 30_000,
      shutdownGraceMs: 10_000,
      queueMaxPending: 10_000,
      queueMaxPendingBytes: 256 * 1024 * 1024,
      incomingMaxBytes: 256 * 1024 * 1024,
      streamHeartbeatMs: 10_000,
      streamMaxBufferedBytes: 8 * 1024 * 1024,
      forwardLeaseMs: 10_000,
      acceptAny: 'off',
    });
  });

  it('reads every variable', () => {
    const env = {
      RECEPTION_PORT: '9090',
      RECEPTION_HOST: '0.0.0.0',
      RECEPTION_DATA: '/var/lib/reception',
      RECEPTION_TOKEN: 'a-token-of-sixteen+',
      RECEPTION_CONFIG: '/etc/reception.yaml',
      RECEPTION_DATABASE_URL: 'postgresql://user@db/reception',
      RECEPTION_DATABASE_SCHEMA: 'reception_2',
      RECEPTION_DATABASE_POOL: '3',
      RECEPTION_DURABILITY: 'relaxed',
      RECEPTION_RETENTION: '30d',
      RECEPTION_REFUSALS_KEEP: '0',
      RECEPTION_REFUSALS_KEEP_TOTAL: '50',
      RECEPTION_REFUSALS_RETENTION: '12h',
      RECEPTION_TRUSTED_PROXIES: '10.0.0.0/8, ::1 ,192.168.1.1',
      RECEPTION_REDACT_HEADERS: 'Authorization, X-Api-Key',
      RECEPTION_MAX_BODY_BYTES: '1024',
      RECEPTION_LOG_LEVEL: 'debug',
      RECEPTION_LOG_FORMAT: 'json',
      RECEPTION_REQUEST_TIMEOUT_MS: '5000',
      RECEPTION_SHUTDOWN_GRACE_MS: '0',
      RECEPTION_QUEUE_MAX_PENDING: '5',
      RECEPTION_QUEUE_MAX_BYTES: '2048',
      RECEPTION_INCOMING_MAX_BYTES: '4096',
      RECEPTION_STREAM_HEARTBEAT_MS: '1000',
      RECEPTION_STREAM_BUFFER_BYTES: '4096',
      RECEPTION_FORWARD_LEASE_MS: '2000',
      RECEPTION_ACCEPT_ANY: 'on',
    };
    // Every setting of the table is set here.
    expect(Object.keys(env).sort()).toEqual(
      Object.values(SETTINGS)
        .map((spec) => spec.env)
        .sort(),
    );
    const settings = loadSettings(env);
    expect(settings).toMatchObject({
      port: 9090,
      host: '0.0.0.0',
      dataDir: '/var/lib/reception',
      token: 'a-token-of-sixteen+',
      configFile: '/etc/reception.yaml',
      databaseUrl: 'postgresql://user@db/reception',
      databaseSchema: 'reception_2',
      databasePoolSize: 3,
      durability: 'relaxed',
      retentionMs: 30 * 86_400_000,
      refusalsKeep: 0,
      refusalsKeepTotal: 50,
      refusalsRetentionMs: 12 * 3_600_000,
      trustedProxies: ['10.0.0.0/8', '::1', '192.168.1.1'],
      redactHeaders: ['authorization', 'x-api-key'],
      maxBodyBytes: 1024,
      logLevel: 'debug',
      logFormat: 'json',
      requestTimeoutMs: 5000,
      shutdownGraceMs: 0,
      queueMaxPending: 5,
      queueMaxPendingBytes: 2048,
      incomingMaxBytes: 4096,
      streamHeartbeatMs: 1000,
      streamMaxBufferedBytes: 4096,
      forwardLeaseMs: 2000,
      acceptAny: 'on',
      // Every variable above is one that a setting reads.
      ignoredVariables: [],
    });
  });

  it('names the RECEPTION_* variables that no setting reads, with the one probably meant, and leaves the rest of the environment alone', () => {
    const settings = loadSettings({
      RECEPTION_RETENSION: '30d',
      reception_port: '9000',
      RECEPTION_DATABSE_URL: 'postgres://db/x',
      RECEPTION_SOMETHING_ELSE_ENTIRELY: '1',
      RECEPTION_QUEUE_MAX: '5',
      RECEPTION_REQUEST_TIMEOUT: '5000',
      RECEPTION_URL: 'http://127.0.0.1:8080',
      RECEPTION_TEST_DATABASE_URL: 'postgres://db/test',
      RECEPTION_BENCH_DATABASE_URL: 'postgres://db/bench',
      HOME: '/root',
      PORT: '80',
    });
    expect(settings.ignoredVariables).toEqual([
      { name: 'RECEPTION_DATABSE_URL', meant: 'RECEPTION_DATABASE_URL' },
      // Two settings begin so: neither is guessed.
      { name: 'RECEPTION_QUEUE_MAX' },
      { name: 'RECEPTION_REQUEST_TIMEOUT', meant: 'RECEPTION_REQUEST_TIMEOUT_MS' },
      { name: 'RECEPTION_RETENSION', meant: 'RECEPTION_RETENTION' },
      { name: 'RECEPTION_SOMETHING_ELSE_ENTIRELY' },
      { name: 'reception_port', meant: 'RECEPTION_PORT' },
    ]);
    expect(settings.retentionMs).toBeUndefined();
    expect(settings.port).toBe(8080);
  });

  it('takes blank values as unset and trims the others', () => {
    const settings = loadSettings({
      RECEPTION_PORT: '  ',
      RECEPTION_HOST: ' ::1 ',
      RECEPTION_TOKEN: '',
      RECEPTION_DURABILITY: ' relaxed ',
    });
    expect(settings.port).toBe(8080);
    expect(settings.host).toBe('::1');
    expect(settings.token).toBeUndefined();
    expect(settings.durability).toBe('relaxed');
  });

  it('makes a relative data directory absolute', () => {
    expect(loadSettings({ RECEPTION_DATA: 'inbox' }).dataDir).toBe(resolve('inbox'));
  });

  it('accepts a token of any length (CONTRACT 3 sets none; the server warns about a short one)', () => {
    expect(loadSettings({ RECEPTION_TOKEN: 'test-token' }).token).toBe('test-token');
    expect(loadSettings({ RECEPTION_TOKEN: 'x' }).token).toBe('x');
  });

  it('redacts nothing when RECEPTION_REDACT_HEADERS is set but empty', () => {
    expect(loadSettings({ RECEPTION_REDACT_HEADERS: '' }).redactHeaders).toEqual([]);
  });

  it('accepts postgres:// as well as postgresql://', () => {
    expect(loadSettings({ RECEPTION_DATABASE_URL: 'postgres://db/x' }).databaseUrl).toBe('postgres://db/x');
  });

  it('accepts only trusted proxies that the address matcher can load', () => {
    const entries = ['10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', '2001:db8::/32', '::/0', '::ffff:10.0.0.1', '172.16.0.0/12'];
    const { trustedProxies } = loadSettings({ RECEPTION_TRUSTED_PROXIES: entries.join(',') });
    expect(trustedProxies).toEqual(entries);
    expect(new TrustedProxies(trustedProxies).trusts('172.20.1.1')).toBe(true);
  });

  it.each([
    ['RECEPTION_PORT', 'abc'],
    ['RECEPTION_PORT', '70000'],
    ['RECEPTION_PORT', '-1'],
    ['RECEPTION_PORT', '80.5'],
    ['RECEPTION_PORT', '1e3'],
    ['RECEPTION_DURABILITY', 'fast'],
    ['RECEPTION_DURABILITY', 'FULL'],
    ['RECEPTION_RETENTION', 'forever'],
    ['RECEPTION_RETENTION', '30'],
    ['RECEPTION_RETENTION', '0d'],
    ['RECEPTION_REFUSALS_RETENTION', 'forever'],
    ['RECEPTION_REFUSALS_KEEP', '-1'],
    ['RECEPTION_REFUSALS_KEEP', '10k'],
    ['RECEPTION_REFUSALS_KEEP_TOTAL', '0'],
    ['RECEPTION_DATABASE_URL', 'mysql://db/x'],
    ['RECEPTION_DATABASE_URL', 'db.example.com'],
    ['RECEPTION_DATABASE_SCHEMA', 'Public'],
    ['RECEPTION_DATABASE_SCHEMA', 'x; DROP TABLE y'],
    ['RECEPTION_DATABASE_POOL', '0'],
    ['RECEPTION_TOKEN', 'two words'],
    ['RECEPTION_TOKEN', 'caf\u00e9-token-1234567'],
    ['RECEPTION_TRUSTED_PROXIES', 'proxy.example.com'],
    ['RECEPTION_TRUSTED_PROXIES', '10.0.0.1,*'],
    ['RECEPTION_TRUSTED_PROXIES', '999.1.1.1'],
    ['RECEPTION_TRUSTED_PROXIES', '1.2.3'],
    ['RECEPTION_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['RECEPTION_TRUSTED_PROXIES', '2001:db8::/129'],
    ['RECEPTION_TRUSTED_PROXIES', ':::'],
    ['RECEPTION_TRUSTED_PROXIES', '10.0.0.0/'],
    ['RECEPTION_LOG_LEVEL', 'verbose'],
    ['RECEPTION_MAX_BODY_BYTES', '0'],
    ['RECEPTION_MAX_BODY_BYTES', '5MiB'],
    ['RECEPTION_REQUEST_TIMEOUT_MS', '50'],
    ['RECEPTION_SHUTDOWN_GRACE_MS', 'ten'],
    ['RECEPTION_QUEUE_MAX_PENDING', '0'],
    ['RECEPTION_QUEUE_MAX_BYTES', '10'],
    ['RECEPTION_INCOMING_MAX_BYTES', '1MiB'],
    ['RECEPTION_STREAM_HEARTBEAT_MS', '60000'],
    ['RECEPTION_STREAM_BUFFER_BYTES', '1'],
    ['RECEPTION_FORWARD_LEASE_MS', '50'],
    ['RECEPTION_FORWARD_LEASE_MS', '30000'],
  ])('refuses %s=%j with a message that names it', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.startsWith(`${name}: `)).toBe(true);
  });

  it('quotes the bad value where it is safe to show', () => {
    expect(problemsOf({ RECEPTION_PORT: 'abc' })[0]).toContain('"abc"');
    expect(problemsOf({ RECEPTION_TRUSTED_PROXIES: 'proxy.example.com' })[0]).toContain('"proxy.example.com"');
  });

  it('never repeats a bad token or database URL, which may hold secrets', () => {
    expect(problemsOf({ RECEPTION_TOKEN: 'secret 12' })[0]).not.toContain('secret');
    expect(problemsOf({ RECEPTION_DATABASE_URL: 'mysql://u:hunter2@db' })[0]).not.toContain('hunter2');
  });

  it('reports every problem at once, each under its variable', () => {
    const env = {
      RECEPTION_PORT: 'x',
      RECEPTION_DURABILITY: 'x',
      RECEPTION_RETENTION: 'x',
      RECEPTION_DATABASE_URL: 'x',
      RECEPTION_DATABASE_SCHEMA: 'X',
      RECEPTION_DATABASE_POOL: 'x',
      RECEPTION_TOKEN: 'x y',
      RECEPTION_TRUSTED_PROXIES: 'x',
      RECEPTION_LOG_LEVEL: 'x',
      RECEPTION_MAX_BODY_BYTES: 'x',
      RECEPTION_REQUEST_TIMEOUT_MS: 'x',
      RECEPTION_SHUTDOWN_GRACE_MS: 'x',
      RECEPTION_QUEUE_MAX_PENDING: 'x',
      RECEPTION_QUEUE_MAX_BYTES: 'x',
      RECEPTION_STREAM_HEARTBEAT_MS: 'x',
      RECEPTION_STREAM_BUFFER_BYTES: 'x',
    };
    let error: unknown;
    try {
      loadSettings(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const { problems, message } = error as SettingsError;
    expect(problems.map((p) => p.slice(0, p.indexOf(':'))).sort()).toEqual(Object.keys(env).sort());
    for (const name of Object.keys(env)) expect(message).toContain(name);
  });
});
