import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { describeLanguageTable, parse, parseError } from './language-table.js';

// docs/compatibility.md#issues-query-language
describeLanguageTable('issues', {
  bare: ['confidential', 'submitted by me', 'commented by me', 'mentioned me'],
  withValue: ['submitted by', 'commented by', 'mentioned', 'fixed in commit', 'fixed in build', 'fixed in pull request', 'has any'],
  fields: {
    Project: ['is'],
    Number: ['is', 'is greater than', 'is less than'],
    State: ['is', 'is after', 'is before'],
    Title: ['contains'],
    Description: ['contains'],
    Comment: ['contains'],
    'Submit Date': ['is since', 'is until'],
    'Last Activity Date': ['is since', 'is until'],
    'Vote Count': ['is', 'is greater than', 'is less than'],
    'Comment Count': ['is', 'is greater than', 'is less than'],
    Milestone: ['is', 'is empty'],
  },
  unary: ['is empty', 'is me'],
  samples: {
    Number: 'proj#12',
    'Submit Date': 'today',
    'Last Activity Date': '2024-01-31',
    'Vote Count': '5',
    'Comment Count': '0',
  },
  sort: ['Vote Count', 'Comment Count', 'Number', 'State', 'Submit Date', 'Project', 'Last Activity Date'],
  numbers: true,
});

describe('issues: standalone criteria', () => {
  it('fixed between <kind> "a" and <kind> "b"', () => {
    expect(parse('issues', 'fixed between build "app#1" and commit "app:abc123"')).toEqual({
      criteria: {
        kind: 'fixedBetween',
        from: { type: 'build', value: 'app#1' },
        to: { type: 'commit', value: 'app:abc123' },
        column: 1,
      },
      orders: [],
    });
    expect(parse('issues', 'confidential or FIXED\tBETWEEN Tag "v1" AND branch "main"').criteria).toEqual({
      kind: 'or',
      left: { kind: 'operator', operator: 'confidential', value: null, column: 1 },
      right: { kind: 'fixedBetween', from: { type: 'tag', value: 'v1' }, to: { type: 'branch', value: 'main' }, column: 17 },
    });
    expect(parseError('issues', 'fixed between release "a" and tag "b"').message).toBe("Unexpected 'release' at column 15");
    expect(parseError('issues', 'fixed between tag "a"').message).toBe('Unexpected end of query at column 22');
  });

  it('fixed in commit / build / pull request', () => {
    expect(parse('issues', 'fixed in pull request "app#3" and fixed in build "app#9"').criteria).toEqual({
      kind: 'and',
      left: { kind: 'operator', operator: 'fixed in pull request', value: 'app#3', column: 1 },
      right: { kind: 'operator', operator: 'fixed in build', value: 'app#9', column: 35 },
    });
  });

  it('has any "Link" and any|all "Link" matching(criteria)', () => {
    expect(parse('issues', 'has any "Child Issue"').criteria).toEqual({
      kind: 'operator',
      operator: 'has any',
      value: 'Child Issue',
      column: 1,
    });
    expect(parse('issues', 'any "Child Issue" matching(confidential or "State" is "Open") and #3').criteria).toEqual({
      kind: 'and',
      left: {
        kind: 'linkMatch',
        quantifier: 'any',
        link: 'Child Issue',
        criteria: {
          kind: 'or',
          left: { kind: 'operator', operator: 'confidential', value: null, column: 28 },
          right: { kind: 'field', field: 'State', operator: 'is', value: 'Open', column: 44 },
        },
        column: 1,
      },
      right: { kind: 'number', number: 3, column: 67 },
    });
    expect(parse('issues', 'ALL"Blocker"\nMatching ( "State" is after "Open" )').criteria).toEqual({
      kind: 'linkMatch',
      quantifier: 'all',
      link: 'Blocker',
      criteria: { kind: 'field', field: 'State', operator: 'is after', value: 'Open', column: 25 },
      column: 1,
    });
    expect(parseError('issues', 'any "Child"').message).toBe('Unexpected end of query at column 12');
    expect(parseError('issues', 'any "Child" matching(nope)').message).toBe("Unexpected 'nope' at column 22");
  });

  it('the issue-only forms are refused in other languages', () => {
    expect(parseError('pulls', 'fixed between build "a" and build "b"').message).toBe("Unexpected 'fixed' at column 1");
    expect(parseError('builds', 'fixed between build "a" and build "b"').message).toBe("Unexpected 'between' at column 7");
    expect(parseError('pulls', 'any "Child" matching(open)').message).toBe("Unexpected 'any' at column 1");
  });

  it('"Milestone" is empty', () => {
    expect(parse('issues', '"Milestone" is empty order by "State"')).toEqual({
      criteria: { kind: 'field', field: 'Milestone', operator: 'is empty', value: null, column: 1 },
      orders: [{ field: 'State', direction: 'asc' }],
    });
  });
});

describe('issues: custom fields', () => {
  const options = { extraFields: ['Assignee', 'Due Date', { name: 'Priority', operators: ['is', 'is greater than'] }] };

  it('accepts custom fields with the custom-field operators, case-insensitively', () => {
    expect(parseQuery('issues', '"assignee" is me and "Due Date" is until "tomorrow"', options).criteria).toEqual({
      kind: 'and',
      left: { kind: 'field', field: 'Assignee', operator: 'is me', value: null, column: 1 },
      right: { kind: 'field', field: 'Due Date', operator: 'is until', value: 'tomorrow', column: 22 },
    });
    expect(parseQuery('issues', '"Priority" is greater than "Minor"', options).criteria).toMatchObject({
      field: 'Priority',
      operator: 'is greater than',
    });
  });

  it('named custom fields sort; fully defined ones follow their definition', () => {
    expect(parseQuery('issues', 'order by "due date" desc', options).orders).toEqual([{ field: 'Due Date', direction: 'desc' }]);
    expect(() => parseQuery('issues', 'order by "Priority"', options)).toThrow('Can not order by field: Priority');
    expect(() => parseQuery('issues', '"Priority" is empty', options)).toThrow("Field 'Priority' is not applicable for operator 'is empty'");
  });

  it('built-in fields win over custom fields of the same name', () => {
    expect(() => parseQuery('issues', '"Title" is me', { extraFields: ['Title'] })).toThrow("Field 'Title' is not applicable for operator 'is me'");
  });

  it('languages without custom fields refuse names', () => {
    expect(() => parseQuery('pulls', 'open', { extraFields: ['X'] })).toThrow(TypeError);
  });
});
