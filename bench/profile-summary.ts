import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** `node:internal/...`, a package name, a project file, or a V8 pseudo-frame. */
function moduleOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage?.[1] !== undefined) return inPackage[1];
  const project = /\/dist\/(.+)$/.exec(url);
  return project?.[1] ?? url;
}

function shortUrl(url: string): string {
  return url.replace(/^file:\/\/.*\/node_modules\//, '').replace(/^file:\/\/.*\/dist\//, '');
}

interface Totals {
  totalMs: number;
  byFunction: Map<string, number>;
  byModule: Map<string, number>;
}

function add(map: Map<string, number>, key: string, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

function addProfile(profile: CpuProfile, totals: Totals): void {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  profile.samples.forEach((id, index) => {
    // timeDeltas[i] is the time since the previous sample: the time until the next one belongs to this one.
    const ms = (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index] ?? 0) / 1000;
    const frame = frames.get(id);
    if (frame === undefined) return;
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    totals.totalMs += ms;
    add(totals.byFunction, frame.url === '' ? name : `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`, ms);
    add(totals.byModule, moduleOf(frame.url, name), ms);
  });
}

function top(map: Map<string, number>, totalMs: number, count: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, ms]) => `  ${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${key}`);
}

/** Top self-time functions and modules over every `.cpuprofile` in `dir`. */
export function summarizeProfiles(dir: string, count = 20): string {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) return `no .cpuprofile in ${dir} (the server must exit normally to write one)\n`;
  const totals: Totals = { totalMs: 0, byFunction: new Map(), byModule: new Map() };
  for (const file of files) addProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, totals);
  return [
    `CPU profile ${files.map((f) => join(dir, f)).join(', ')}: ${(totals.totalMs / 1000).toFixed(1)} s sampled`,
    'top self time by function:',
    ...top(totals.byFunction, totals.totalMs, count),
    'top self time by module:',
    ...top(totals.byModule, totals.totalMs, count),
    '',
  ].join('\n');
}

// `node dist/bench/profile-summary.js DIR` summarizes a profile directory by itself.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (dir === undefined) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <dir with .cpuprofile files>\n');
    process.exit(2);
  }
  process.stdout.write(summarizeProfiles(dir));
}
