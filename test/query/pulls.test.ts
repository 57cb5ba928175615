import { describe, expect, it } from 'vitest';
import { describeLanguageTable, parse, parseError } from './language-table.js';

// docs/compatibility.md#pull-requests-query-language
describeLanguageTable('pulls', {
  bare: [
    'open',
    'merged',
    'discarded',
    'assigned to me',
    'submitted by me',
    'commented by me',
    'to be reviewed by me',
    'requested for changes by me',
    'approved by me',
    'mentioned me',
    'someone requested for changes',
    'has pending reviews',
    'has failed builds',
    'to be verified by builds',
    'has merge conflicts',
  ],
  withValue: [
    'to be reviewed by',
    'assigned to',
    'approved by',
    'requested for changes by',
    'submitted by',
    'commented by',
    'mentioned',
    'includes commit',
    'includes issue',
  ],
  fields: {
    Number: ['is', 'is greater than', 'is less than'],
    Status: ['is'],
    Title: ['contains'],
    Description: ['contains'],
    Comment: ['contains'],
    'Target Project': ['is'],
    'Source Project': ['is'],
    'Target Branch': ['is'],
    'Source Branch': ['is'],
    Label: ['is'],
    'Merge Strategy': ['is'],
    'Comment Count': ['is', 'is greater than', 'is less than'],
    'Submit Date': ['is since', 'is until'],
    'Last Activity Date': ['is since', 'is until'],
    // Accepted by OneDev's field check; Gitloom implements it (docs/compatibility.md#gitloom-differs-improved-behaviour).
    'Close Date': ['is since', 'is until'],
  },
  unary: [],
  samples: {
    Number: 'group/app#42',
    'Comment Count': '3',
    'Submit Date': '2024-01-01',
    'Last Activity Date': 'yesterday',
    'Close Date': '3 days ago',
  },
  sort: ['Submit Date', 'Last Activity Date', 'Number', 'Status', 'Target Project', 'Source Project', 'Target Branch', 'Source Branch', 'Comment Count'],
  numbers: true,
});

describe('pulls: reference examples', () => {
  it('open and "Target Branch" is "main" order by "Number" desc', () => {
    expect(parse('pulls', 'open and "Target Branch" is "main" order by "Number" desc')).toEqual({
      criteria: {
        kind: 'and',
        left: { kind: 'operator', operator: 'open', value: null, column: 1 },
        right: { kind: 'field', field: 'Target Branch', operator: 'is', value: 'main', column: 10 },
      },
      orders: [{ field: 'Number', direction: 'desc' }],
    });
  });

  it('"Number" is "group/app#42" and #42', () => {
    expect(parse('pulls', '"Number" is "group/app#42"').criteria).toEqual({
      kind: 'field',
      field: 'Number',
      operator: 'is',
      value: 'group/app#42',
      column: 1,
    });
    expect(parse('pulls', '#42')).toEqual({ criteria: { kind: 'number', number: 42, column: 1 }, orders: [] });
  });

  it('not (discarded) and "Title" contains "fix*crash" and submitted by "alice"', () => {
    expect(parse('pulls', 'not (discarded) and "Title" contains "fix*crash" and submitted by "alice"').criteria).toEqual({
      kind: 'and',
      left: {
        kind: 'and',
        left: { kind: 'not', operand: { kind: 'operator', operator: 'discarded', value: null, column: 6 } },
        right: { kind: 'field', field: 'Title', operator: 'contains', value: 'fix*crash', column: 21 },
      },
      right: { kind: 'operator', operator: 'submitted by', value: 'alice', column: 54 },
    });
  });

  it('"Submit Date" is since "2024-01-01" order by "Submit Date" asc and "Number" desc', () => {
    expect(parse('pulls', '"Submit Date" is since "2024-01-01" order by "Submit Date" asc and "Number" desc')).toEqual({
      criteria: { kind: 'field', field: 'Submit Date', operator: 'is since', value: '2024-01-01', column: 1 },
      orders: [
        { field: 'Submit Date', direction: 'asc' },
        { field: 'Number', direction: 'desc' },
      ],
    });
  });

  it('to be reviewed by me or includes issue "group/app#7"', () => {
    expect(parse('pulls', 'to be reviewed by me or includes issue "group/app#7"').criteria).toEqual({
      kind: 'or',
      left: { kind: 'operator', operator: 'to be reviewed by me', value: null, column: 1 },
      right: { kind: 'operator', operator: 'includes issue', value: 'group/app#7', column: 25 },
    });
  });

  it('~login timeout~', () => {
    expect(parse('pulls', '~login timeout~').criteria).toEqual({ kind: 'fuzzy', text: 'login timeout', column: 1 });
  });

  it('tells phrases that share words apart', () => {
    expect(parse('pulls', 'to be reviewed by "bob"').criteria).toMatchObject({ operator: 'to be reviewed by', value: 'bob' });
    expect(parse('pulls', 'to be verified by builds').criteria).toMatchObject({ operator: 'to be verified by builds' });
    expect(parse('pulls', 'requested for changes by "bob"').criteria).toMatchObject({
      operator: 'requested for changes by',
      value: 'bob',
    });
    expect(parse('pulls', 'someone requested for changes').criteria).toMatchObject({
      operator: 'someone requested for changes',
    });
    expect(parse('pulls', '"Number" is greater than "g/a#3" and "Comment Count" is less than "2"').criteria).toEqual({
      kind: 'and',
      left: { kind: 'field', field: 'Number', operator: 'is greater than', value: 'g/a#3', column: 1 },
      right: { kind: 'field', field: 'Comment Count', operator: 'is less than', value: '2', column: 38 },
    });
  });

  it('refuses incomplete and misspelt phrases at the word that does not fit', () => {
    expect(parseError('pulls', 'has merge').message).toBe('Unexpected end of query at column 10');
    expect(parseError('pulls', 'has merge "x"').message).toBe(`Unexpected '"x"' at column 11`);
    expect(parseError('pulls', 'to be approved by me').message).toBe("Unexpected 'approved' at column 7");
    expect(parseError('pulls', '"Number" is greater "3"').message).toBe(`Unexpected '"3"' at column 21`);
    expect(parseError('pulls', '"Title" contains').message).toBe('Unexpected end of query at column 17');
  });

  it('refuses a non-integer count', () => {
    const error = parseError('pulls', '"Comment Count" is greater than "two"');
    expect(error.message).toBe("Invalid integer for field 'Comment Count': two");
    expect(error.column).toBe(33);
  });
});
