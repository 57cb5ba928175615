import { describe, expect, it } from 'vitest';
import { describeLanguageTable, parse, parseError } from './language-table.js';

// docs/compatibility.md#code-comments-query-language
describeLanguageTable('codeComments', {
  bare: ['resolved', 'unresolved', 'created by me', 'replied by me', 'mentioned me'],
  withValue: ['created by', 'replied by', 'mentioned', 'on commit'],
  fields: {
    Content: ['contains'],
    Reply: ['contains'],
    Path: ['is'],
    'Create Date': ['is since', 'is until'],
    'Last Activity Date': ['is since', 'is until'],
    'Reply Count': ['is', 'is greater than', 'is less than'],
  },
  unary: [],
  samples: { 'Create Date': 'last week', 'Last Activity Date': '2024-01-01', 'Reply Count': '2' },
  sort: ['Status', 'Create Date', 'Last Activity Date', 'Reply Count'],
  numbers: false,
});

describe('codeComments: reference examples', () => {
  it('unresolved and "Path" is "src/" order by "Last Activity Date" desc', () => {
    expect(parse('codeComments', 'unresolved and "Path" is "src/" order by "Last Activity Date" desc')).toEqual({
      criteria: {
        kind: 'and',
        left: { kind: 'operator', operator: 'unresolved', value: null, column: 1 },
        right: { kind: 'field', field: 'Path', operator: 'is', value: 'src/', column: 16 },
      },
      orders: [{ field: 'Last Activity Date', direction: 'desc' }],
    });
  });

  it('not(created by "admin") and "Reply Count" is greater than "2"', () => {
    expect(parse('codeComments', 'not(created by "admin") and "Reply Count" is greater than "2"').criteria).toEqual({
      kind: 'and',
      left: { kind: 'not', operand: { kind: 'operator', operator: 'created by', value: 'admin', column: 5 } },
      right: { kind: 'field', field: 'Reply Count', operator: 'is greater than', value: '2', column: 29 },
    });
  });

  it('saved queries', () => {
    expect(parse('codeComments', 'mentioned me').criteria).toMatchObject({ operator: 'mentioned me', value: null });
    expect(parse('codeComments', 'mentioned "bob"').criteria).toMatchObject({ operator: 'mentioned', value: 'bob' });
    expect(parse('codeComments', '"Create Date" is since "last week"').criteria).toMatchObject({
      field: 'Create Date',
      operator: 'is since',
      value: 'last week',
    });
    expect(parse('codeComments', '')).toEqual({ criteria: null, orders: [] });
  });

  it('Status sorts but is not a query field', () => {
    expect(parse('codeComments', 'order by "Status" desc').orders).toEqual([{ field: 'Status', direction: 'desc' }]);
    expect(parseError('codeComments', '"Status" is "x"').message).toBe('Field not found: Status');
  });

  it('refuses a non-integer reply count', () => {
    expect(parseError('codeComments', '"Reply Count" is "1.5"').message).toBe("Invalid integer for field 'Reply Count': 1.5");
  });
});
