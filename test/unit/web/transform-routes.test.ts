import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../../web/src/format.js';
import { routesOf, type TransformInfo } from '../../../web/src/transform-routes.js';

function transform(name: string, usedBy: TransformInfo['usedBy']): TransformInfo {
  return { name, version: '0123456789ab', timeoutMs: 50, memoryMb: 16, usedBy };
}

describe("the detail's transform buttons", () => {
  it("offers the source's routes with a transform, by transform then destination, each pair once", () => {
    const transforms = [
      transform('slack', [
        { source: 'stripe', destination: 'chat' },
        { source: 'github', destination: 'chat' },
        { source: 'stripe', destination: 'alerts' },
        // Two routes to one destination (different filters): one button, the run is the same.
        { source: 'stripe', destination: 'chat' },
      ]),
      transform('audit', [{ source: 'stripe', destination: 'log' }]),
      transform('unused', []),
    ];
    expect(routesOf(transforms, 'stripe')).toEqual([
      { transform: 'audit', destination: 'log' },
      { transform: 'slack', destination: 'alerts' },
      { transform: 'slack', destination: 'chat' },
    ]);
    expect(routesOf(transforms, 'github')).toEqual([{ transform: 'slack', destination: 'chat' }]);
    expect(routesOf(transforms, 'plain')).toEqual([]);
  });

  it('writes a run time as a person reads it', () => {
    expect(formatDuration(0.412)).toBe('0.41 ms');
    expect(formatDuration(12.34)).toBe('12.3 ms');
    expect(formatDuration(108.4)).toBe('108 ms');
  });
});
