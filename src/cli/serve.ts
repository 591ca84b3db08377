import { loadSettings, SettingsError } from '../config/settings.js';
import { parseCommand, renderHelp, UsageError, type CommandSpec, type FlagSpec } from './usage.js';

/** Each flag of `reception serve` sets one environment variable of the server (README "Configuration"). */
const SETTINGS_FLAGS: ReadonlyArray<FlagSpec & { env: string }> = [
  { name: 'port', type: 'string', value: 'N', env: 'RECEPTION_PORT', help: 'Port to listen on (default 8080; 0 picks a free one).' },
  { name: 'host', type: 'string', value: 'ADDR', env: 'RECEPTION_HOST', help: 'Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface).' },
  { name: 'data', type: 'string', value: 'DIR', env: 'RECEPTION_DATA', help: 'Data directory: the SQLite database and the generated token (default ./data).' },
  {
    name: 'token', type: 'string', value: 'TOKEN', env: 'RECEPTION_TOKEN',
    help: 'API token for reading, printable ASCII without spaces; under 16 characters it is accepted with a warning (default: generated once and kept in the data directory). Prefer the variable: flags show in `ps`.',
  },
  { name: 'config', type: 'string', value: 'FILE', env: 'RECEPTION_CONFIG', help: 'Per-source rules file (YAML or JSON).' },
  { name: 'database-url', type: 'string', value: 'URL', env: 'RECEPTION_DATABASE_URL', help: 'postgres:// URL: PostgreSQL instead of SQLite, so several instances share one inbox.' },
  { name: 'database-schema', type: 'string', value: 'NAME', env: 'RECEPTION_DATABASE_SCHEMA', help: 'PostgreSQL schema for the tables (default public).' },
  { name: 'database-pool', type: 'string', value: 'N', env: 'RECEPTION_DATABASE_POOL', help: 'PostgreSQL connections (default 10).' },
  { name: 'durability', type: 'string', value: 'full|relaxed', env: 'RECEPTION_DURABILITY', help: 'full (default): every commit survives power loss; relaxed: a crash of Reception only.' },
  { name: 'retention', type: 'string', value: 'DURATION', env: 'RECEPTION_RETENTION', help: 'Delete deliveries older than this, e.g. 30d, 12h (default: keep forever).' },
  { name: 'max-body-bytes', type: 'string', value: 'N', env: 'RECEPTION_MAX_BODY_BYTES', help: 'Largest body accepted (default 5242880).' },
  { name: 'trusted-proxies', type: 'string', value: 'LIST', env: 'RECEPTION_TRUSTED_PROXIES', help: 'Comma-separated addresses or CIDR ranges allowed to set X-Forwarded-For.' },
  { name: 'redact-headers', type: 'string', value: 'LIST', env: 'RECEPTION_REDACT_HEADERS', help: 'Header values replaced by [redacted] before storing (default authorization,cookie,proxy-authorization).' },
  { name: 'request-timeout-ms', type: 'string', value: 'MS', env: 'RECEPTION_REQUEST_TIMEOUT_MS', help: 'Time for a request\'s headers and body to arrive (default 30000).' },
  { name: 'shutdown-grace-ms', type: 'string', value: 'MS', env: 'RECEPTION_SHUTDOWN_GRACE_MS', help: 'Time requests in flight get to finish on SIGTERM (default 10000).' },
  { name: 'queue-max-pending', type: 'string', value: 'N', env: 'RECEPTION_QUEUE_MAX_PENDING', help: 'Deliveries waiting for a commit before new ones get 503 (default 10000).' },
  { name: 'queue-max-bytes', type: 'string', value: 'N', env: 'RECEPTION_QUEUE_MAX_BYTES', help: 'Body bytes waiting for a commit before new ones get 503 (default 268435456).' },
  { name: 'stream-heartbeat-ms', type: 'string', value: 'MS', env: 'RECEPTION_STREAM_HEARTBEAT_MS', help: 'Time between heartbeat comments on /api/stream (default 10000, at most 15000).' },
  { name: 'stream-buffer-bytes', type: 'string', value: 'N', env: 'RECEPTION_STREAM_BUFFER_BYTES', help: 'Bytes a stream client may leave unread; past that, taking none of them for a heartbeat interval disconnects it (default 8388608).' },
  { name: 'log-level', type: 'string', value: 'LEVEL', env: 'RECEPTION_LOG_LEVEL', help: 'fatal, error, warn, info (default), debug, trace or silent.' },
];

export const serveSpec: CommandSpec = {
  name: 'serve',
  summary: 'run the Reception server (the default command)',
  usage: ['serve [flags]', '[flags]'],
  description:
    'Receives webhooks on POST /api/webhook/{source} and serves the inbox API, the live stream and the web page. '
    + 'Every flag mirrors a RECEPTION_* environment variable and wins over it. '
    + 'SIGTERM or Ctrl-C stops accepting, answers the requests in flight, commits and exits 0.',
  flags: [...SETTINGS_FLAGS],
  examples: [
    'reception serve --port 8080 --data ./data',
    'RECEPTION_TOKEN=$(openssl rand -hex 24) reception serve --host 0.0.0.0 --retention 30d',
  ],
};

/** Starts the server; resolves once it listens (the process then runs until a signal). */
export async function runServe(argv: string[]): Promise<number | undefined> {
  const { values } = parseCommand(serveSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(serveSpec));
    return 0;
  }
  const env: Record<string, string | undefined> = { ...process.env };
  const fromFlag = new Map<string, string>();
  for (const flag of SETTINGS_FLAGS) {
    const value = values[flag.name];
    if (typeof value === 'string') {
      env[flag.env] = value;
      fromFlag.set(flag.env, `--${flag.name}`);
    }
  }
  let settings;
  try {
    settings = loadSettings(env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    // The settings name their variable; say the flag when a flag set it.
    const problems = error.problems.map((problem) => {
      const variable = /^(RECEPTION_[A-Z_]+):/.exec(problem)?.[1];
      const flag = variable === undefined ? undefined : fromFlag.get(variable);
      return flag === undefined || variable === undefined ? problem : `${flag}${problem.slice(variable.length)}`;
    });
    const message = problems.length === 1 ? problems.join('') : `invalid settings:\n  - ${problems.join('\n  - ')}`;
    if (problems.some((p) => p.startsWith('--'))) throw new UsageError(message, 'serve');
    process.stderr.write(`reception: ${message}\n`);
    return 1;
  }
  const { startServer } = await import('../server.js');
  try {
    await startServer(settings);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`reception: ${error.message}\n`);
      return 1;
    }
    const reason = (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? `port ${settings.port} on ${settings.host} is already in use (choose another with --port)`
      : error instanceof Error ? error.message : String(error);
    process.stderr.write(`reception: the server could not start: ${reason}\n`);
    return 1;
  }
  return undefined;
}
