import { loadSettings, SettingsError } from '../platform/config/settings.js';
import { SETTINGS, shownDefault } from '../platform/config/settings-table.js';
import { StartError } from '../platform/config/start-error.js';
import { parseCommand, renderHelp, UsageError, type CommandSpec, type FlagSpec, type FlagValues } from './usage.js';

/** Each flag of `reception serve` sets one environment variable of the server: one a setting of the settings table. */
export const SETTINGS_FLAGS: ReadonlyArray<FlagSpec & { env: string }> = Object.values(SETTINGS).map((spec) => {
  const fallback = shownDefault(spec);
  return {
    name: spec.flag,
    type: 'string',
    value: spec.value,
    env: spec.env,
    help: spec.help,
    default: 'value' in fallback ? fallback.value : fallback.text,
  };
});

export const serveSpec: CommandSpec = {
  name: 'serve',
  summary: 'run the Reception server (the default command)',
  usage: ['serve [flags]', '[flags]'],
  description:
    'Receives webhooks on POST /api/webhook/{source} and serves the inbox API, the live stream and the web page. ' +
    'Every flag mirrors a RECEPTION_* environment variable and wins over it. ' +
    'SIGTERM or Ctrl-C stops accepting, answers the requests in flight, commits and exits 0.',
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
  const { env, fromFlag } = environmentWithFlags(process.env, values);
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
    // A setting that a flag gave is named as the flag; one from the environment as its variable;
    // one left at its default as the flag, the way to change it on this command line.
    const name = (variable: string): string => {
      const flag = fromFlag.get(variable);
      if (flag !== undefined) return flag;
      if ((process.env[variable] ?? '').trim() !== '') return variable;
      const spec = SETTINGS_FLAGS.find((f) => f.env === variable);
      return spec === undefined ? variable : `--${spec.name}`;
    };
    const reason =
      error instanceof StartError ? `${error.describe(name)}.` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`reception: the server could not start: ${reason}\n`);
    return 1;
  }
  return undefined;
}

/** The environment with each serve flag given set as its variable (the flag wins), and which flag set which variable. */
export function environmentWithFlags(
  environment: Record<string, string | undefined>,
  values: FlagValues,
): { env: Record<string, string | undefined>; fromFlag: Map<string, string> } {
  const env = { ...environment };
  const fromFlag = new Map<string, string>();
  for (const flag of SETTINGS_FLAGS) {
    const value = values[flag.name];
    if (typeof value === 'string') {
      env[flag.env] = value;
      fromFlag.set(flag.env, `--${flag.name}`);
    }
  }
  return { env, fromFlag };
}
