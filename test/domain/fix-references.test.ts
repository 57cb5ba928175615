import { describe, expect, it } from 'vitest';
import { isRelatedProject, parseFixReferences } from '../../src/domain/issues/fix-references.js';
import { parseMentions } from '../../src/domain/mentions.js';

describe('parseFixReferences (docs/compatibility.md#fixed-issue-references)', () => {
  const cases: [string, { projectPath: string | null; number: number }[]][] = [
    ['fixes #12', [{ projectPath: null, number: 12 }]],
    ['Fix #1', [{ projectPath: null, number: 1 }]],
    ['FIXED #2', [{ projectPath: null, number: 2 }]],
    ['fixing #3', [{ projectPath: null, number: 3 }]],
    [
      'resolve #4 and resolved #5',
      [
        { projectPath: null, number: 4 },
        { projectPath: null, number: 5 },
      ],
    ],
    ['resolves #6', [{ projectPath: null, number: 6 }]],
    ['resolving #7', [{ projectPath: null, number: 7 }]],
    ['close #8', [{ projectPath: null, number: 8 }]],
    ['closed #9', [{ projectPath: null, number: 9 }]],
    ['Closes: issue #3', [{ projectPath: null, number: 3 }]],
    ['closing:  #10', [{ projectPath: null, number: 10 }]],
    ['resolve issue #5', [{ projectPath: null, number: 5 }]],
    ['Closes: group/app#3', [{ projectPath: 'group/app', number: 3 }]],
    ['resolved group/proj#7', [{ projectPath: 'group/proj', number: 7 }]],
    ['fixes My.Group/sub-app#11', [{ projectPath: 'my.group/sub-app', number: 11 }]],
    ['Add login page (#12)', [{ projectPath: null, number: 12 }]],
    ['Add login page ( #12 )  ', [{ projectPath: null, number: 12 }]],
    ['Squashed (group/app#13)', [{ projectPath: 'group/app', number: 13 }]],
    ['Squashed (issue #14)', [{ projectPath: null, number: 14 }]],
    ['fixes #1, #2', [{ projectPath: null, number: 1 }]],
    ['(#12) is mentioned first', []],
    ['see #12', []],
    ['prefix#12 without keyword', []],
    ['suffixes #12', []],
    ['fixes#12', []],
    ['fixes #12abc', []],
    ['fixes #12.', [{ projectPath: null, number: 12 }]],
    [
      'Title line\n\nbody text\n  fixes #20\ncloses #21',
      [
        { projectPath: null, number: 20 },
        { projectPath: null, number: 21 },
      ],
    ],
    ['fixes #22\nfixes #22', [{ projectPath: null, number: 22 }]],
    ['no references at all', []],
    ['', []],
  ];
  it.each(cases)('%j', (text, expected) => {
    expect(parseFixReferences(text)).toEqual(expected);
  });

  it('accepts null and undefined', () => {
    expect(parseFixReferences(null)).toEqual([]);
    expect(parseFixReferences(undefined)).toEqual([]);
  });
});

describe('isRelatedProject (same, ancestor or descendant)', () => {
  it.each([
    ['group/app', 'group/app', true],
    ['group/app', 'GROUP/App', true],
    ['group/app', 'group', true],
    ['group', 'group/app', true],
    ['group/app', 'group/app/sub', true],
    ['group/app', 'group/other', false],
    ['group/app', 'group/application', false],
    ['group/app', 'other', false],
  ] as const)('%s → %s = %s', (from, to, expected) => {
    expect(isRelatedProject(from, to)).toBe(expected);
  });
});

describe('parseMentions (docs/compatibility.md#mentions-and-notifications)', () => {
  it.each([
    ['hello @bob', ['bob']],
    ['@Alice at start', ['alice']],
    ['thanks @bob, and @carol.', ['bob', 'carol']],
    ['(@dave)', ['dave']],
    ['mail a@b.com is not a mention', []],
    ['`@code` is skipped', []],
    ['```\n@block\n```\n', []],
    ['[@link](http://x) is skipped', []],
    ['**@bold** counts', ['bold']],
    ['- item @listed', ['listed']],
    ['@bob @bob', ['bob']],
    ['', []],
  ] as const)('%j', (text, expected) => {
    expect(parseMentions(text)).toEqual(expected);
  });
});
