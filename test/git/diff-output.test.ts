import { describe, expect, it } from 'vitest';
import { afterSummary } from '../../src/git/diff.js';

/** The summary and the patch `afterSummary` splits `chunks` into. */
async function split(chunks: Buffer[]): Promise<{ summary: string; patch: string }> {
  const summary: Buffer[] = [];
  const patch: Buffer[] = [];
  async function* output() {
    yield* chunks;
  }
  for await (const bytes of afterSummary(output(), summary)) patch.push(bytes);
  return { summary: Buffer.concat(summary).toString(), patch: Buffer.concat(patch).toString() };
}

describe('afterSummary', () => {
  // a raw record, a rename's numstat record (an empty path field before its two paths), the pair of NULs, the patch
  const summary = ':100644 100644 aaa bbb R090\0a\0b\0' + '1\t2\t\0a\0b\0';
  const patch = 'diff --git a/a b/b\nsimilarity index 90%\n';
  const output = Buffer.from(`${summary}\0${patch}`);

  it('splits at the first pair of NULs wherever the chunks break, also between the two NULs', async () => {
    for (let a = 0; a <= output.length; a++) {
      for (const b of [a, a + 1, a + 2, output.length]) {
        const chunks = [output.subarray(0, a), output.subarray(a, Math.min(b, output.length)), output.subarray(Math.min(b, output.length))];
        expect(await split(chunks.filter((c) => c.length > 0)), `chunks break at ${a} and ${b}`).toEqual({ summary, patch });
      }
    }
  });

  it('gives an empty patch when git wrote only the summary', async () => {
    expect(await split([Buffer.from(`${summary}\0`)])).toEqual({ summary, patch: '' });
  });
});
