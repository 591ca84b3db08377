/**
 * A start that failed for a setting's value (the port is taken, the data
 * directory cannot be written): the message names the setting as the
 * person gave it, the variable under `npm start`, the flag when
 * `reception serve --port …` set it.
 */
export class StartError extends Error {
  constructor(
    /** The message, with `{RECEPTION_PORT}`-style placeholders for each setting it names. */
    private readonly template: string,
    options?: { cause?: unknown },
  ) {
    super(
      fill(template, (variable) => variable),
      options,
    );
    this.name = 'StartError';
  }

  /** The message with each setting named by `name` (a flag such as `--port`, or the variable itself). */
  describe(name: (variable: string) => string): string {
    return fill(this.template, name);
  }
}

/** `{RECEPTION_PORT}` as `name('RECEPTION_PORT')`; `{RECEPTION_PORT=0}` as the variable or flag set to 0. */
function fill(template: string, name: (variable: string) => string): string {
  return template.replace(/\{(RECEPTION_[A-Z_]+)(?:=([^}]*))?\}/g, (_, variable: string, value: string | undefined) => {
    const shown = name(variable);
    if (value === undefined) return shown;
    return shown.startsWith('--') ? `${shown} ${value}` : `${shown}=${value}`;
  });
}

/** Why listening failed, in words, with what to do. */
export function listenProblem(error: unknown, host: string, port: number): StartError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = `port ${port} on ${host}`;
  const template =
    code === 'EADDRINUSE'
      ? `${where} is already in use ({RECEPTION_PORT}): another program, or another Reception, listens there. Stop it, or choose another port ({RECEPTION_PORT=0} picks a free one)`
      : code === 'EACCES'
        ? `${where} may only be used by a privileged user ({RECEPTION_PORT}): choose a port above 1023 ({RECEPTION_PORT=0} picks a free one), and put a proxy on the low port`
        : code === 'EADDRNOTAVAIL'
          ? `cannot listen on ${host}: it is not an address of this machine ({RECEPTION_HOST}); use 127.0.0.1, or 0.0.0.0 for every interface`
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? `cannot listen on ${host}: the name does not resolve to an address ({RECEPTION_HOST}, ${code}); use 127.0.0.1, or 0.0.0.0 for every interface`
            : `cannot listen on ${host} port ${port} ({RECEPTION_HOST}, {RECEPTION_PORT}): ${error instanceof Error ? error.message : String(error)}`;
  return new StartError(template, { cause: error });
}

/** Why the data directory cannot be used, with what to do. */
export function dataDirProblem(error: unknown, dir: string): StartError {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? 'this user may not write there'
      : code === 'EROFS'
        ? 'the file system is read-only'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'a file, not a directory, is in the way'
          : code === 'ENOSPC'
            ? 'the disk is full'
            : 'it cannot be created or written';
  return new StartError(
    `the data directory ${dir} ({RECEPTION_DATA}) cannot be used: ${why} (${code}). Point {RECEPTION_DATA} at a directory that this user can write`,
    { cause: error },
  );
}
