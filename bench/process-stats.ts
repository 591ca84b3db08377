import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Peak resident set size (VmHWM) of a live process, in bytes. */
export function peakRssBytes(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 });
    const value = Number(out.stdout.trim());
    ticksPerSecond = out.status === 0 && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

/** CPU time (user + system) a live process has used so far, in seconds. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    if (!Number.isFinite(user) || !Number.isFinite(system)) return undefined;
    return (user + system) / clockTicks();
  } catch {
    return undefined;
  }
}
