import { setPriority } from 'node:os';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { ConfigFileError, loadConfigFileChecked } from './source-config.js';
import { detachLongLists, VALUES_PER_PART } from './long-lists.js';
import type { ConfigParts, ConfigRead } from './config-reader.js';

/**
 * The thread that reads, parses and validates the config file on reload
 * (config-reader.ts), its transforms compiled. A file that loads goes to `parts`: its long lists a
 * few thousand values per message, then the rest; then the thread says so.
 * A file that does not load: its problems, as plain data.
 */
async function read(file: string, parts: MessagePort): Promise<ConfigRead> {
  try {
    const config = await loadConfigFileChecked(file);
    const { paths, lists } = detachLongLists(config);
    for (const values of lists) {
      for (let from = 0; from < values.length; from += VALUES_PER_PART) {
        parts.postMessage({ values: values.slice(from, from + VALUES_PER_PART) } satisfies ConfigParts);
      }
    }
    parts.postMessage({ config, paths, lengths: lists.map((values) => values.length) } satisfies ConfigParts);
    return { inParts: true };
  } catch (error) {
    if (error instanceof ConfigFileError) return { refused: { located: error.located, summary: error.summary } };
    return { failed: error instanceof Error ? error.message : String(error) };
  }
}

const { file, parts } = workerData as { file: string; parts: MessagePort };
// On Linux a thread has a nice value of its own (setpriority of 0 is the calling thread there, the whole
// process elsewhere): the reading gives way to the event loop where the CPU is short.
if (process.platform === 'linux') {
  try {
    setPriority(0, 19);
  } catch {
    // Not allowed: it reads at the server's own priority.
  }
}
void read(file, parts).then((answer) => parentPort?.postMessage(answer));
