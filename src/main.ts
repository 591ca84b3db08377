import { loadSettings, SettingsError } from './platform/config/settings.js';
import { StartError } from './platform/config/start-error.js';

/** `npm start`: read the environment and serve; a bad setting exits 1 with a message naming it. */
async function main(): Promise<void> {
  try {
    const settings = loadSettings(process.env);
    // Loaded after the settings check, so that a bad variable fails at once.
    const { startServer } = await import('./server.js');
    await startServer(settings);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\nFix the variables above and start again (see docs/settings.md).\n`);
    } else if (error instanceof StartError) {
      // `npm start` takes variables only: name them (RECEPTION_PORT=0 npm start).
      process.stderr.write(`Reception could not start: ${error.describe((variable) => variable)}.\n`);
    } else {
      process.stderr.write(`Reception could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exit(1);
  }
}

void main();
