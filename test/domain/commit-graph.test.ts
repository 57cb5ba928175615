import { describe, expect, it } from 'vitest';
import { commitGraph } from '../../src/domain/repositories/commit-graph.js';

describe('commit graph lanes', () => {
  it('keeps a linear history on one lane', () => {
    const rows = commitGraph([
      { hash: 'c', parents: ['b'] },
      { hash: 'b', parents: ['a'] },
      { hash: 'a', parents: [] },
    ]);
    expect(rows.map((r) => r.lane)).toEqual([0, 0, 0]);
    expect(rows.map((r) => r.width)).toEqual([1, 1, 1]);
    expect(rows[0].lines).toEqual([{ fromLane: 0, fromY: 1, toLane: 0, toY: 2 }]);
    expect(rows[2].lines).toEqual([{ fromLane: 0, fromY: 0, toLane: 0, toY: 1 }]);
  });

  it('opens a lane for a merged branch and closes it where the branch forked', () => {
    // m merges s (side, from a) into b (main, from a)
    const rows = commitGraph([
      { hash: 'm', parents: ['b', 's'] },
      { hash: 's', parents: ['a'] },
      { hash: 'b', parents: ['a'] },
      { hash: 'a', parents: [] },
    ]);
    expect(rows.map((r) => r.lane)).toEqual([0, 1, 0, 0]);
    expect(rows[0].lines).toContainEqual({ fromLane: 0, fromY: 1, toLane: 1, toY: 2 });
    expect(rows[1].lines).toContainEqual({ fromLane: 0, fromY: 0, toLane: 0, toY: 2 });
    // a: both lanes end in it
    expect(rows[3].lines).toEqual([
      { fromLane: 0, fromY: 0, toLane: 0, toY: 1 },
      { fromLane: 1, fromY: 0, toLane: 0, toY: 1 },
    ]);
    expect(rows[3].width).toBe(2);
  });

  it('gives a branch head that no listed commit names a lane of its own, and leaves outside parents open', () => {
    const rows = commitGraph([
      { hash: 'x', parents: ['p'] },
      { hash: 'y', parents: ['q'] },
    ]);
    expect(rows.map((r) => r.lane)).toEqual([0, 1]);
    expect(rows[1].lines).toContainEqual({ fromLane: 0, fromY: 0, toLane: 0, toY: 2 });
    expect(rows[1].lines).toContainEqual({ fromLane: 1, fromY: 1, toLane: 1, toY: 2 });
  });
});
