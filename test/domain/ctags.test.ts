import { afterEach, describe, expect, it } from 'vitest';
import { CtagsSession, locateCtags, MAX_TAGS_PER_FILE } from '../../src/domain/code-search/ctags.js';

/** Universal Ctags in its sandboxed interactive mode (docs/compatibility.md#code-search): tags, and the bounds on hostile files. */
describe('Universal Ctags session', () => {
  let session: CtagsSession | undefined;
  afterEach(() => session?.close());

  const open = async (limits?: { timeoutMs: number; maxTimeouts: number }) => {
    const binary = await locateCtags(null);
    if (!binary) throw new Error('Universal Ctags is not installed (apt-get install universal-ctags)');
    session = new CtagsSession(binary, limits);
    return session;
  };
  const ts = Buffer.from('export class Engine {\n  start() {}\n}\n');

  it('answers each file’s definitions with kind, line, scope and language', async () => {
    const ctags = await open();
    expect(await ctags.tagsOf('src/engine.ts', ts)).toEqual({
      tags: [
        { name: 'Engine', kind: 'class', line: 1, scope: null, language: 'TypeScript' },
        { name: 'start', kind: 'method', line: 2, scope: 'Engine', language: 'TypeScript' },
      ],
      skipped: null,
    });
    expect(await ctags.tagsOf('notes.unknown-extension', Buffer.from('whatever\n'))).toEqual({ tags: [], skipped: null });
  });

  it('gives a file ctags crashes on no tags and the next file a fresh ctags', async () => {
    const ctags = await open();
    expect(await ctags.tagsOf('crash.c', Buffer.from('{'.repeat(100_000)))).toEqual({ tags: [], skipped: 'Universal Ctags failed on this file' });
    expect((await ctags.tagsOf('src/engine.ts', ts)).tags).toHaveLength(2);
  });

  it('kills ctags on a file it takes too long over, and asks no more after the run’s timeouts', async () => {
    // ctags takes some 6 s over this file; 2 s leave a fresh sandboxed ctags time to start on a loaded machine
    const ctags = await open({ timeoutMs: 2000, maxTimeouts: 2 });
    const hang = Buffer.from('['.repeat(1_000_000));
    expect(await ctags.tagsOf('hang.rb', hang)).toEqual({ tags: [], skipped: 'Universal Ctags took longer than 2 s' });
    expect((await ctags.tagsOf('src/engine.ts', ts)).tags).toHaveLength(2);
    await ctags.tagsOf('hang-again.rb', hang);
    expect(await ctags.tagsOf('src/engine.ts', ts)).toEqual({ tags: [], skipped: 'Universal Ctags timed out on 2 files of this indexing run' });
  });

  it('keeps the first 5,000 tags of a file', async () => {
    const ctags = await open();
    const many = Buffer.from(Array.from({ length: 6000 }, (_, i) => `def f${i}():\n    pass\n`).join(''));
    const { tags, skipped } = await ctags.tagsOf('many.py', many);
    expect(tags).toHaveLength(MAX_TAGS_PER_FILE);
    expect(tags.at(-1)).toMatchObject({ name: 'f4999', line: 9999 });
    expect(skipped).toBe('more than 5,000 symbols: the first ones kept');
    expect((await ctags.tagsOf('src/engine.ts', ts)).tags).toHaveLength(2);
  });
});
