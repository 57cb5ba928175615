import { describe, expect, it } from 'vitest';
import { parseCommitQuery } from '../../src/query/commit-query.js';
import { QuerySyntaxError } from '../../src/query/errors.js';

describe('commit query syntax (OneDev 8.6 CommitQuery)', () => {
  it('reads revisions with since/until, the -by-me criteria and value criteria, with columns', () => {
    expect(parseCommitQuery('since tag(v4.0.0) until tag(v4.7.0)')).toEqual([
      { type: 'revision', scope: 'since', kind: 'tag', value: 'v4.0.0', column: 11 },
      { type: 'revision', scope: 'until', kind: 'tag', value: 'v4.7.0', column: 29 },
    ]);
    expect(parseCommitQuery('  DEFAULT-BRANCH\nauthored-by-me committed-by-me branch( feature/x )')).toEqual([
      { type: 'revision', scope: null, kind: 'default-branch', value: null, column: 3 },
      { type: 'authored-by-me', column: 18 },
      { type: 'committed-by-me', column: 33 },
      { type: 'revision', scope: null, kind: 'branch', value: 'feature/x', column: 56 },
    ]);
    expect(
      parseCommitQuery('message(fix \\(#12\\)) path(src/a b.ts) before(last week) after(2024-01-01) author(*bob*) committer(x) commit(abc) build(#3)').map(
        (c) => [c.type, 'value' in c ? c.value : null],
      ),
    ).toEqual([
      ['message', 'fix (#12)'],
      ['path', 'src/a b.ts'],
      ['before', 'last week'],
      ['after', '2024-01-01'],
      ['author', '*bob*'],
      ['committer', 'x'],
      ['revision', 'abc'],
      ['revision', '#3'],
    ]);
    expect(parseCommitQuery('')).toEqual([]);
    expect(parseCommitQuery('   ')).toEqual([]);
  });

  it('says what and where for syntax errors', () => {
    const error = (text: string) => {
      try {
        parseCommitQuery(text);
      } catch (e) {
        expect(e).toBeInstanceOf(QuerySyntaxError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(error('branch(main) frobnicate')).toBe("Unexpected 'frobnicate' at column 14");
    expect(error('tag(')).toBe('Unterminated value at column 4');
    expect(error('branch()')).toBe('Empty value at column 7');
    expect(error('since')).toBe('Unexpected end of query at column 6');
    expect(error('since author(x)')).toBe("Unexpected 'author' at column 7");
  });
});
