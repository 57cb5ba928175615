import { describe, expect, it } from 'vitest';
import { objectRead } from '../../src/domain/object-reads.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('reads kept by object ids', () => {
  it('runs a read of the same objects once per repository and kind', async () => {
    let runs = 0;
    const read = async () => ({ run: ++runs });
    expect(await objectRead('/repos/1.git', 'merge-base', [A, B], read)).toEqual({ run: 1 });
    expect(await objectRead('/repos/1.git', 'merge-base', [A, B], read)).toEqual({ run: 1 });
    expect(await objectRead('/repos/1.git', 'merge-base', [B, A], read)).toEqual({ run: 2 });
    expect(await objectRead('/repos/2.git', 'merge-base', [A, B], read)).toEqual({ run: 3 });
    expect(await objectRead('/repos/1.git', 'diff:3', [A, B], read)).toEqual({ run: 4 });
    expect(await objectRead('/repos/1.git', 'diff:3', [null, B], read)).toEqual({ run: 5 });
    expect(await objectRead('/repos/1.git', 'diff:3', [null, B], read)).toEqual({ run: 5 });
  });

  it('always runs reads by names or abbreviated ids, and keeps no failure', async () => {
    let runs = 0;
    const read = async () => ++runs;
    expect(await objectRead('/repos/1.git', 'diff', ['main', B], read)).toBe(1);
    expect(await objectRead('/repos/1.git', 'diff', ['main', B], read)).toBe(2);
    expect(await objectRead('/repos/1.git', 'diff', [A.slice(0, 12), B], read)).toBe(3);
    expect(await objectRead('/repos/1.git', 'diff', [A.slice(0, 12), B], read)).toBe(4);
    const failing = () => Promise.reject(new Error('git failed'));
    await expect(objectRead('/repos/1.git', 'entry', [A], failing)).rejects.toThrow('git failed');
    expect(await objectRead('/repos/1.git', 'entry', [A], read)).toBe(5);
  });

  it('shares a read under way: one run however many ask, its failure reaching each of them', async () => {
    let runs = 0;
    let finish!: (value: number) => void;
    const read = () => {
      runs++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const asked = [objectRead('/repos/1.git', 'shared', [A], read), objectRead('/repos/1.git', 'shared', [A], read)];
    finish(7);
    expect(await Promise.all(asked)).toEqual([7, 7]);
    expect(await objectRead('/repos/1.git', 'shared', [A], read)).toBe(7);
    expect(runs).toBe(1);
    let fail!: (error: Error) => void;
    const failing = () => {
      runs++;
      return new Promise<number>((_, reject) => (fail = reject));
    };
    const failed = [objectRead('/repos/1.git', 'shared', [B], failing), objectRead('/repos/1.git', 'shared', [B], failing)];
    fail(new Error('git failed'));
    for (const one of failed) await expect(one).rejects.toThrow('git failed');
    expect(runs).toBe(2);
    expect(await objectRead('/repos/1.git', 'shared', [B], async () => ++runs)).toBe(3);
  });
});
