import { describe, expect, it } from 'vitest';
import { checkCommitMessage, commitMessageRuleOf, type CommitMessageRule } from '../../src/domain/projects/commit-messages.js';

const base: CommitMessageRule = {
  enforceConventionalCommits: true,
  commitTypes: ['feat', 'bug'],
  commitScopes: ['docs', 'api', 'docs/api', 'docs api'],
  checkCommitMessageFooter: false,
  commitMessageFooterPattern: null,
  commitTypesForFooterCheck: [],
  maxCommitMessageLineLength: 80,
};

const ok = (rule: CommitMessageRule, message: string, merge = false) => expect(checkCommitMessage(rule, message, merge), message).toBeNull();
const bad = (rule: CommitMessageRule, message: string, merge = false) => expect(checkCommitMessage(rule, message, merge), message).not.toBeNull();

describe('commit message rules (docs/compatibility.md#projects-branch-protection)', () => {
  it('accepts conventional subjects and git revert subjects', () => {
    for (const m of [
      'feat: hello world',
      'feat(docs): hello world',
      'feat(docs)!: hello world',
      'feat(docs/api)!: hello world',
      'feat(docs api)!: hello world',
      'Revert "hello world"',
      'revert "lower case"',
    ])
      ok(base, m);
  });

  it("refuses malformed subjects with OneDev's message", () => {
    for (const m of [
      'revert  "hello world"',
      'feat:hello world',
      'feat ! :hello world',
      'feat(docs):hello world',
      'feat(docs)!:  hello world',
      'feat(docs  api)!: hello world',
      'feat ( docs/api ) ! hello world',
      'hello world',
    ])
      bad(base, m);
    expect(checkCommitMessage(base, 'just words', false)).toBe(
      'Line 1: Subject is expected of either a git revert message, or format: <type>[optional (scope)][!]: <description>',
    );
  });

  it('checks types and scopes against the lists', () => {
    expect(checkCommitMessage(base, 'feat2: hello world', false)).toBe(
      'Line 1: Subject is expected of either a git revert message, or format: <type>[optional (scope)][!]: <description>',
    );
    expect(checkCommitMessage(base, 'chore: tidy up', false)).toBe("Line 1: Unexpected type 'chore': Should be one of [feat,bug]");
    expect(checkCommitMessage(base, 'feat(web)!: hello world', false)).toBe("Line 1: Unexpected scope 'web': Should be one of [docs,api,docs/api,docs api]");
    ok({ ...base, commitTypes: [], commitScopes: [] }, 'chore(anything): tidy up');
  });

  it('skips the conventional check for merge commits, not the layout and length checks', () => {
    ok(base, 'hello world', true);
    ok(base, 'fix(ä): ö', true);
    bad(base, 'hello world hello world hello world hello world hello world hello world hello world hello world hello world ', true);
    expect(checkCommitMessage(base, 'Merge branch x\nbody', true)).toBe('One and only one blank line is expected between subject and body/footer');
  });

  it('wants exactly one blank line between subject and body, and limits line length', () => {
    ok(base, 'feat: hello world\n\nbody');
    bad(base, 'feat: hello world\nbody');
    bad(base, 'feat: hello world\n\n\nbody');
    expect(checkCommitMessage(base, `feat: short\n\n${'x'.repeat(81)}`, false)).toBe('Line 3: Length exceeds 80');
  });

  it('checks footers for the listed types', () => {
    const rule = { ...base, checkCommitMessageFooter: true, commitMessageFooterPattern: 'Signed By: .+' };
    ok(rule, 'hello world', true);
    ok(rule, 'feat: a feature\n\nSigned By: robin');
    for (const m of ['feat: a feature', 'feat: a feature\n', 'feat: a feature\nSigned By: robin']) {
      expect(checkCommitMessage(rule, m, false)).toBe('A footer is expected as last line and exactly one blank line should precede the footer');
    }
    expect(checkCommitMessage(rule, 'feat: a feature\n\na footer', false)).toBe("Unexpected footer format: Should match pattern 'Signed By: .+'");
    const onlyBugs = { ...rule, commitTypesForFooterCheck: ['bug'] };
    ok(onlyBugs, 'feat: a feature');
    bad(onlyBugs, 'bug: a bug');
    expect(checkCommitMessage({ ...rule, commitMessageFooterPattern: '(' }, 'feat: x y\n\nfooter', false)).toBe(
      "Unexpected footer format: Should match pattern '('",
    );
  });

  it('matches footers in linear time (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): a catastrophic pattern answers at once', () => {
    const rule = { ...base, maxCommitMessageLineLength: null, checkCommitMessageFooter: true, commitMessageFooterPattern: '^(a+)+$' };
    expect(checkCommitMessage(rule, `feat: x y\n\n${'a'.repeat(29)}!`, false)).toBe("Unexpected footer format: Should match pattern '^(a+)+$'");
    ok(rule, `feat: x y\n\n${'a'.repeat(29)}`);
    // a footer too long to check against the pattern within the match budget does not match
    bad(rule, `feat: x y\n\n${'a'.repeat(10_000)}`);
  });

  it('reads rules from stored protections; no rule without conventional commits or a length limit', () => {
    expect(commitMessageRuleOf({ enforceConventionalCommits: false, maxCommitMessageLineLength: null })).toBeNull();
    expect(commitMessageRuleOf({ maxCommitMessageLineLength: 'x' })).toBeNull();
    expect(commitMessageRuleOf({ maxCommitMessageLineLength: 72, commitTypes: ['feat', 3] })).toMatchObject({
      enforceConventionalCommits: false,
      maxCommitMessageLineLength: 72,
      commitTypes: ['feat'],
    });
  });
});
