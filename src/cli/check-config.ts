import { ConfigFileError, loadConfigFileChecked } from '../config/source-config.js';
import { resolveDestinations } from '../forwarding/destination.js';
import { privateDestinationWarnings } from '../forwarding/private-destination-warnings.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { parseCommand, renderHelp, UsageError, type CommandSpec } from './usage.js';

export const checkConfigSpec: CommandSpec = {
  name: 'check-config',
  summary: 'validate a config file without starting the server',
  usage: ['check-config FILE'],
  description:
    'Reads the YAML or JSON config file that RECEPTION_CONFIG would name and checks it exactly as the server does at ' +
    'start and on SIGHUP: every problem is printed with the key it concerns. Exits 0 when the file is valid, 1 when not. ' +
    'A valid file may still get warnings on stderr: a destination on localhost or a private, loopback or link-local ' +
    'address without allowPrivateNetwork: true, whose every forward would fail.',
  flags: [],
  positionals: 1,
  examples: ['reception check-config ./reception.yaml'],
};

export async function runCheckConfig(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(checkConfigSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(checkConfigSpec));
    return 0;
  }
  const file = positionals[0];
  if (file === undefined || file === '') throw new UsageError('which file? reception check-config FILE.', 'check-config');
  try {
    const config = await loadConfigFileChecked(file);
    const sources = Object.keys(config.sources ?? {});
    const destinations = Object.keys(config.destinations ?? {});
    const routes = Object.values(config.sources ?? {}).reduce((sum, source) => sum + (source.forward?.length ?? 0), 0);
    const forwarding =
      destinations.length === 0
        ? ''
        : `, ${destinations.length} destination${destinations.length === 1 ? '' : 's'} (${destinations.join(', ')}) with ${routes} route${routes === 1 ? '' : 's'}`;
    const transforms = Object.keys(config.transforms ?? {});
    const transformText =
      transforms.length === 0
        ? ''
        : `, ${transforms.length} transform${transforms.length === 1 ? '' : 's'} (${transforms.join(', ')})`;
    process.stdout.write(
      `${file} is valid: ${sources.length} source${sources.length === 1 ? '' : 's'}` +
        `${sources.length > 0 ? ` (${sources.map(escapeForTerminal).join(', ')})` : ''}${forwarding}${transformText}, strict mode ${config.strict === true ? 'on' : 'off'}.\n`,
    );
    // Valid, but the guard will refuse every forward to these (CONTRACT 6): said on stderr, the exit stays 0.
    for (const warning of privateDestinationWarnings(resolveDestinations(config.destinations).values()))
      process.stderr.write(`warning: ${escapeForTerminal(warning.message)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
}
