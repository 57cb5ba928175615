import { describe, expect, it } from 'vitest';
import { describeLanguageTable, parse, parseError } from './language-table.js';

// docs/compatibility.md#projects-query-language
describeLanguageTable('projects', {
  bare: ['roots', 'leafs', 'fork roots', 'owned by me', 'owned by none', 'has outdated replicas', 'without enough replicas', 'missing storage'],
  withValue: ['owned by', 'children of', 'forks of'],
  fields: {
    Name: ['is'],
    Path: ['is'],
    Label: ['is'],
    'Service Desk Name': ['is'],
    Description: ['contains'],
    'Last Activity Date': ['is since', 'is until'],
    'Last Commit Date': ['is since', 'is until'],
  },
  unary: [],
  samples: { 'Last Activity Date': 'last week', 'Last Commit Date': '2024-01-31' },
  sort: ['Path', 'Name', 'Service Desk Name', 'Last Activity Date', 'Last Commit Date'],
  numbers: false,
});

describe('projects: reference examples', () => {
  it('"Name" is "my*"', () => {
    expect(parse('projects', '"Name" is "my*"')).toEqual({
      criteria: { kind: 'field', field: 'Name', operator: 'is', value: 'my*', column: 1 },
      orders: [],
    });
  });

  it('"Path" is "acme/*" and not(leafs)', () => {
    expect(parse('projects', '"Path" is "acme/*" and not(leafs)').criteria).toEqual({
      kind: 'and',
      left: { kind: 'field', field: 'Path', operator: 'is', value: 'acme/*', column: 1 },
      right: { kind: 'not', operand: { kind: 'operator', operator: 'leafs', value: null, column: 28 } },
    });
  });

  it('children of "acme" order by "Name" desc', () => {
    expect(parse('projects', 'children of "acme" order by "Name" desc')).toEqual({
      criteria: { kind: 'operator', operator: 'children of', value: 'acme', column: 1 },
      orders: [{ field: 'Name', direction: 'desc' }],
    });
  });

  it('roots or forks of "acme/**"', () => {
    expect(parse('projects', 'roots or forks of "acme/**"').criteria).toEqual({
      kind: 'or',
      left: { kind: 'operator', operator: 'roots', value: null, column: 1 },
      right: { kind: 'operator', operator: 'forks of', value: 'acme/**', column: 10 },
    });
  });

  it('date criterion with two orders', () => {
    expect(parse('projects', '"Last Activity Date" is since "last week" order by "Last Commit Date" desc and "Name"')).toEqual({
      criteria: { kind: 'field', field: 'Last Activity Date', operator: 'is since', value: 'last week', column: 1 },
      orders: [
        { field: 'Last Commit Date', direction: 'desc' },
        { field: 'Name', direction: 'asc' },
      ],
    });
  });

  it('~web ui~', () => {
    expect(parse('projects', '~web ui~').criteria).toEqual({ kind: 'fuzzy', text: 'web ui', column: 1 });
  });

  it('"Label" is "backend" and owned by me', () => {
    expect(parse('projects', '"Label" is "backend" and owned by me').criteria).toEqual({
      kind: 'and',
      left: { kind: 'field', field: 'Label', operator: 'is', value: 'backend', column: 1 },
      right: { kind: 'operator', operator: 'owned by me', value: null, column: 26 },
    });
  });

  it('owned by "login" is the value form, owned by me and owned by none the bare forms', () => {
    expect(parse('projects', 'owned by "me"').criteria).toEqual({
      kind: 'operator',
      operator: 'owned by',
      value: 'me',
      column: 1,
    });
    expect(parseError('projects', 'owned by someone').message).toBe("Unexpected 'someone' at column 10");
  });

  it('refuses unreadable dates with the message of OneDev', () => {
    const error = parseError('projects', '"Last Commit Date" is until "whenever"');
    expect(error.message).toBe('Unrecognized date: whenever');
    expect(error.column).toBe(29);
  });
});
