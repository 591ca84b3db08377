import { parentPort, workerData } from 'node:worker_threads';
import { ConfigFileError, loadConfigFile } from './source-config.js';
import type { ConfigRead } from './config-reader.js';

/**
 * The thread that reads, parses and validates the config file on reload
 * (config-reader.ts): it answers once, with the file's data or its
 * problems, as plain data.
 */
function read(file: string): ConfigRead {
  try {
    return { config: loadConfigFile(file) };
  } catch (error) {
    if (error instanceof ConfigFileError) return { refused: { located: error.located, summary: error.summary } };
    return { failed: error instanceof Error ? error.message : String(error) };
  }
}

parentPort?.postMessage(read(String(workerData)));
