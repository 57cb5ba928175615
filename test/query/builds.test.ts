import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { describeLanguageTable, parse, parseError } from './language-table.js';

// docs/compatibility.md#builds-query-language
describeLanguageTable('builds', {
  bare: ['successful', 'failed', 'cancelled', 'timed out', 'waiting', 'pending', 'running', 'finished', 'submitted by me', 'cancelled by me'],
  withValue: ['submitted by', 'cancelled by', 'fixed issue', 'depends on', 'dependencies of', 'in pipeline of', 'ran on'],
  fields: {
    Project: ['is'],
    Job: ['is'],
    Version: ['is', 'is empty'],
    Branch: ['is', 'is empty'],
    Tag: ['is', 'is empty'],
    'Pull Request': ['is', 'is empty'],
    Status: ['is'],
    Number: ['is', 'is greater than', 'is less than'],
    Commit: ['is'],
    Label: ['is'],
    'Submit Date': ['is since', 'is until'],
    'Pending Date': ['is since', 'is until'],
    'Running Date': ['is since', 'is until'],
    'Finish Date': ['is since', 'is until'],
  },
  unary: ['is empty'],
  samples: {
    Number: 'myproj#100',
    'Submit Date': '2023-01-01',
    'Pending Date': 'yesterday',
    'Running Date': '3 days ago',
    'Finish Date': '2024-01-01 10:00',
  },
  sort: ['Job', 'Status', 'Number', 'Submit Date', 'Pending Date', 'Running Date', 'Finish Date', 'Project', 'Commit'],
  numbers: true,
});

describe('builds: reference examples', () => {
  it('"Project" is "myproj" and "Job" is "CI" and successful order by "Number" desc', () => {
    expect(parse('builds', '"Project" is "myproj" and "Job" is "CI" and successful order by "Number" desc')).toEqual({
      criteria: {
        kind: 'and',
        left: {
          kind: 'and',
          left: { kind: 'field', field: 'Project', operator: 'is', value: 'myproj', column: 1 },
          right: { kind: 'field', field: 'Job', operator: 'is', value: 'CI', column: 27 },
        },
        right: { kind: 'operator', operator: 'successful', value: null, column: 45 },
      },
      orders: [{ field: 'Number', direction: 'desc' }],
    });
  });

  it('not(submitted by "admin") and "Version" is "1.*"', () => {
    expect(parse('builds', 'not(submitted by "admin") and "Version" is "1.*"').criteria).toEqual({
      kind: 'and',
      left: { kind: 'not', operand: { kind: 'operator', operator: 'submitted by', value: 'admin', column: 5 } },
      right: { kind: 'field', field: 'Version', operator: 'is', value: '1.*', column: 31 },
    });
  });

  it('failed or timed out; cancelled vs cancelled by', () => {
    expect(parse('builds', 'failed or timed out').criteria).toEqual({
      kind: 'or',
      left: { kind: 'operator', operator: 'failed', value: null, column: 1 },
      right: { kind: 'operator', operator: 'timed out', value: null, column: 11 },
    });
    expect(parse('builds', 'cancelled and cancelled by me and cancelled by "bob"').criteria).toEqual({
      kind: 'and',
      left: {
        kind: 'and',
        left: { kind: 'operator', operator: 'cancelled', value: null, column: 1 },
        right: { kind: 'operator', operator: 'cancelled by me', value: null, column: 15 },
      },
      right: { kind: 'operator', operator: 'cancelled by', value: 'bob', column: 35 },
    });
  });

  it('"Version" is empty vs "Version" is "empty"', () => {
    expect(parse('builds', '"Version" is empty').criteria).toMatchObject({ operator: 'is empty', value: null });
    expect(parse('builds', '"Version" is "empty"').criteria).toMatchObject({ operator: 'is', value: 'empty' });
    expect(parseError('builds', '"Version" is empty "x"').message).toBe(`Unexpected '"x"' at column 20`);
  });

  it('job params are extra fields with is / is empty, not sortable', () => {
    const options = { extraFields: ['Environment'] };
    expect(parseQuery('builds', '"environment" is "prod" or "Environment" is empty', options).criteria).toEqual({
      kind: 'or',
      left: { kind: 'field', field: 'Environment', operator: 'is', value: 'prod', column: 1 },
      right: { kind: 'field', field: 'Environment', operator: 'is empty', value: null, column: 28 },
    });
    expect(() => parseQuery('builds', '"Environment" is since "yesterday"', options)).toThrow("Field 'Environment' is not applicable for operator 'is since'");
    expect(() => parseQuery('builds', 'order by "Environment"', options)).toThrow('Can not order by field: Environment');
    expect(() => parseQuery('builds', '"Environment" is "prod"')).toThrow('Field not found: Environment');
  });

  it('Submitter is not a query field', () => {
    expect(parseError('builds', '"Submitter" is "bob"').message).toBe('Field not found: Submitter');
  });
});
