import { nearestWithin } from '../text/edit-distance.js';
import { SETTINGS, type SettingSpec, type SettingValues } from './settings-table.js';

/** Everything the process reads from its environment, validated: the settings of `SETTINGS`, and what was ignored. */
export interface Settings extends SettingValues {
  /** `RECEPTION_*` variables that nothing reads (a misspelt name), with the setting probably meant: warned of at start. */
  ignoredVariables: IgnoredVariable[];
}

export interface IgnoredVariable {
  name: string;
  /** The variable it probably misspells, if any (`nearestName`). */
  meant?: string;
}

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads the `RECEPTION_*` variable of each setting in `SETTINGS`; collects every problem and throws them together. */
export function loadSettings(env: Env = process.env): Settings {
  const problems: string[] = [];
  const read = <T>({ env: name, kind }: SettingSpec<T>): T =>
    kind.parse(env[name], (problem) => problems.push(`${name}: ${problem}`));
  // One line a setting, so that the compiler checks each value's type against its field.
  const settings: SettingValues = {
    port: read(SETTINGS.port),
    host: read(SETTINGS.host),
    dataDir: read(SETTINGS.dataDir),
    token: read(SETTINGS.token),
    configFile: read(SETTINGS.configFile),
    databaseUrl: read(SETTINGS.databaseUrl),
    databaseSchema: read(SETTINGS.databaseSchema),
    databasePoolSize: read(SETTINGS.databasePoolSize),
    durability: read(SETTINGS.durability),
    retentionMs: read(SETTINGS.retentionMs),
    refusalsKeep: read(SETTINGS.refusalsKeep),
    refusalsKeepTotal: read(SETTINGS.refusalsKeepTotal),
    refusalsRetentionMs: read(SETTINGS.refusalsRetentionMs),
    maxBodyBytes: read(SETTINGS.maxBodyBytes),
    trustedProxies: read(SETTINGS.trustedProxies),
    redactHeaders: read(SETTINGS.redactHeaders),
    requestTimeoutMs: read(SETTINGS.requestTimeoutMs),
    shutdownGraceMs: read(SETTINGS.shutdownGraceMs),
    queueMaxPending: read(SETTINGS.queueMaxPending),
    queueMaxPendingBytes: read(SETTINGS.queueMaxPendingBytes),
    incomingMaxBytes: read(SETTINGS.incomingMaxBytes),
    streamHeartbeatMs: read(SETTINGS.streamHeartbeatMs),
    streamMaxBufferedBytes: read(SETTINGS.streamMaxBufferedBytes),
    forwardLeaseMs: read(SETTINGS.forwardLeaseMs),
    acceptAny: read(SETTINGS.acceptAny),
    logLevel: read(SETTINGS.logLevel),
    logFormat: read(SETTINGS.logFormat),
  };
  if (problems.length > 0) throw new SettingsError(problems);
  const known = new Set([...READ_ELSEWHERE, ...Object.values(SETTINGS).map((spec) => spec.env)]);
  return { ...settings, ignoredVariables: ignoredVariables(env, known) };
}

/** `RECEPTION_*` variables that the command line reads (the server does not). */
const READ_ELSEWHERE = ['RECEPTION_URL'];
/** The project's own test and bench settings, never the server's. */
const PROJECT_PREFIXES = ['RECEPTION_TEST_', 'RECEPTION_BENCH_'];

/**
 * The known name that `name` probably misspells: the nearest within two
 * edits, else the only one that adds a suffix to it (`…_GRACE` for
 * `…_GRACE_MS`).
 */
function nearestName(name: string, known: ReadonlySet<string>): string | undefined {
  const near = nearestWithin(name, known, 2);
  if (near !== undefined) return near;
  const extended = [...known].filter((candidate) => candidate.startsWith(`${name}_`));
  return extended.length === 1 ? extended[0] : undefined;
}

/** The `RECEPTION_*` variables in `env` that no setting reads, each with the name probably meant. */
function ignoredVariables(env: Env, known: ReadonlySet<string>): IgnoredVariable[] {
  const ignored: IgnoredVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    // Names are case-sensitive: `reception_port` is not RECEPTION_PORT, and is said so.
    const upper = name.toUpperCase();
    if (!upper.startsWith('RECEPTION_') || known.has(name) || PROJECT_PREFIXES.some((prefix) => upper.startsWith(prefix)))
      continue;
    const meant = nearestName(upper, known);
    ignored.push(meant === undefined ? { name } : { name, meant });
  }
  return ignored;
}
