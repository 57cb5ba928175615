import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { QuerySyntaxError, parseQuery, type LanguageDefinition } from '../../src/query/index.js';
import { parse, parseError } from './language-table.js';

const op = (operator: string, column: number, value: string | null = null) => ({ kind: 'operator', operator, value, column });

describe('precedence and grouping', () => {
  it('and binds tighter than or', () => {
    expect(parse('pulls', 'open or merged and discarded').criteria).toEqual({
      kind: 'or',
      left: op('open', 1),
      right: { kind: 'and', left: op('merged', 9), right: op('discarded', 20) },
    });
    expect(parse('pulls', 'open and merged or discarded').criteria).toEqual({
      kind: 'or',
      left: { kind: 'and', left: op('open', 1), right: op('merged', 10) },
      right: op('discarded', 20),
    });
  });

  it('chains are left-associative', () => {
    expect(parse('pulls', 'open or merged or discarded').criteria).toEqual({
      kind: 'or',
      left: { kind: 'or', left: op('open', 1), right: op('merged', 9) },
      right: op('discarded', 19),
    });
  });

  it('parentheses group', () => {
    expect(parse('pulls', '(open or merged) and discarded').criteria).toEqual({
      kind: 'and',
      left: { kind: 'or', left: op('open', 2), right: op('merged', 10) },
      right: op('discarded', 22),
    });
    expect(parse('pulls', '((( open )))').criteria).toEqual(op('open', 5));
  });

  it('not needs parentheses, with or without a space before them', () => {
    const expected = { kind: 'not', operand: { kind: 'or', left: op('open', 6), right: op('merged', 14) } };
    expect(parse('pulls', 'not (open or merged)').criteria).toEqual(expected);
    expect(parse('pulls', 'not(open or merged)').criteria).toEqual({
      kind: 'not',
      operand: { kind: 'or', left: op('open', 5), right: op('merged', 13) },
    });
    expect(parse('pulls', 'not(not(open))').criteria).toEqual({ kind: 'not', operand: { kind: 'not', operand: op('open', 9) } });
    expect(parseError('pulls', 'not open').message).toBe("Unexpected 'not' at column 1");
  });

  it('a query may be empty or only order by', () => {
    expect(parse('pulls', '')).toEqual({ criteria: null, orders: [] });
    expect(parse('pulls', ' \t\n ')).toEqual({ criteria: null, orders: [] });
    expect(parse('pulls', 'order by "Number"')).toEqual({ criteria: null, orders: [{ field: 'Number', direction: 'asc' }] });
  });
});

describe('quoted strings and fuzzy text', () => {
  it('a backslash escapes the next character', () => {
    expect(parse('pulls', String.raw`"Title" contains "say \"hi\" \\ \x"`).criteria).toMatchObject({ value: 'say "hi" \\ x' });
    expect(parse('pulls', String.raw`"Ti\tle" contains "x"`).criteria).toMatchObject({ field: 'Title' });
  });

  it('keeps quoted text as written: case, inner whitespace, keywords', () => {
    expect(parse('pulls', '"Title" contains "  Open AND or order by  "').criteria).toMatchObject({
      value: '  Open AND or order by  ',
    });
  });

  it('fuzzy text unescapes \\~ and keeps what is inside', () => {
    expect(parse('pulls', String.raw`~a\~b  "c"~`).criteria).toEqual({ kind: 'fuzzy', text: 'a~b  "c"', column: 1 });
    expect(parse('pulls', 'open and~x~').criteria).toEqual({
      kind: 'and',
      left: op('open', 1),
      right: { kind: 'fuzzy', text: 'x', column: 9 },
    });
  });
});

describe('leniency (docs/compatibility.md#gitloom-differs-pagination-and-query-parameters)', () => {
  it('keywords are case-insensitive and any whitespace separates tokens', () => {
    const strict = parse('pulls', 'not(open) and "Title" contains "x" or submitted by "bob" order by "Number" desc and "Status"');
    const lenient = parse('pulls', '\n NOT\t( OPEN )\r\nAND   "title"\tCONTAINS\n"x" Or SUBMITTED\t\tBy "bob"\n\nORDER  BY\t"number" DESC\nAnd "STATUS" Asc ');
    const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (k, v) => (k === 'column' ? undefined : v)));
    expect(strip(lenient)).toEqual(strip(strict));
    expect(lenient.orders).toEqual([
      { field: 'Number', direction: 'desc' },
      { field: 'Status', direction: 'asc' },
    ]);
  });

  it('needs no whitespace next to quotes and parentheses', () => {
    expect(parse('pulls', '"Title"contains"x"and(open)').criteria).toEqual({
      kind: 'and',
      left: { kind: 'field', field: 'Title', operator: 'contains', value: 'x', column: 1 },
      right: op('open', 23),
    });
  });

  it('words must be separated', () => {
    expect(parseError('pulls', 'openand merged').message).toBe("Unexpected 'openand' at column 1");
    expect(parseError('pulls', 'open andmerged').message).toBe("Unexpected 'andmerged' at column 6");
  });
});

describe('syntax errors', () => {
  it.each([
    ['open and xyz', "Unexpected 'xyz' at column 10", 10],
    ['open xyz', "Unexpected 'xyz' at column 6", 6],
    ['"Title" contains "a" xyz', "Unexpected 'xyz' at column 22", 22],
    ['open and', 'Unexpected end of query at column 9', 9],
    ['open or ', 'Unexpected end of query at column 9', 9],
    ['(open', 'Unexpected end of query at column 6', 6],
    ['open)', "Unexpected ')' at column 5", 5],
    ['open and and merged', "Unexpected 'and' at column 10", 10],
    ['"Title" contains "abc', 'Unterminated quoted string at column 18', 18],
    ['"Title" contains "abc\\"', 'Unterminated quoted string at column 18', 18],
    ['"Title" contains ""', 'Empty quoted string at column 18', 18],
    ['""', 'Empty quoted string at column 1', 1],
    ['~abc', 'Unterminated fuzzy text at column 1', 1],
    ['open or ~~', 'Empty fuzzy text at column 9', 9],
    ['open order by', 'Unexpected end of query at column 14', 14],
    ['open order by Number', "Unexpected 'Number' at column 15", 15],
    ['order by "Number" up', "Unexpected 'up' at column 19", 19],
    ['order by "Number" desc "Status"', `Unexpected '"Status"' at column 24`, 24],
    ['open order "Number"', "Unexpected 'order' at column 6", 6],
    ['"Title" "x"', `Unexpected '"x"' at column 9`, 9],
    ['open & merged', "Unexpected '&' at column 6", 6],
    ['#', 'Unexpected end of query at column 2', 2],
    ['#12x', "Unexpected 'x' at column 4", 4],
    ['open\nand\n@', "Unexpected '@' at column 10", 10],
  ])('%j → %s', (text, message, column) => {
    const error = parseError('pulls', text);
    expect(error.message).toBe(message);
    expect(error.column).toBe(column);
  });

  it('is a 400 BadRequest', () => {
    const error = parseError('pulls', 'bogus');
    expect(error).toBeInstanceOf(BadRequest);
    expect(error.status).toBe(400);
    expect(error.name).toBe('QuerySyntaxError');
  });

  it('refuses numbers out of range', () => {
    expect(parseError('pulls', '#99999999999999999999').message).toBe("Invalid number '#99999999999999999999' at column 1");
  });

  it('refuses nesting too deep for the stack with a 400', () => {
    const deep = '('.repeat(20_000) + 'open' + ')'.repeat(20_000);
    expect(() => parseQuery('pulls', deep)).toThrow(QuerySyntaxError);
    expect(() => parseQuery('pulls', deep)).toThrow('Query is nested too deeply');
  });

  it('refuses a flat chain too long for the check with a 400, not a stack overflow', () => {
    const chain = Array.from({ length: 50_000 }, () => 'open').join(' or ');
    expect(() => parseQuery('pulls', chain)).toThrow(QuerySyntaxError);
    expect(() => parseQuery('pulls', chain)).toThrow('Query is nested too deeply');
  });

  it('parses long flat queries', () => {
    const long = Array.from({ length: 2000 }, (_, i) => `"Title" contains "w${i}"`).join(' or ');
    const result = parseQuery('pulls', long);
    expect(result.criteria).toMatchObject({ kind: 'or', right: { value: 'w1999' } });
  });
});

describe('custom language definitions', () => {
  const definition: LanguageDefinition = {
    name: 'tickets',
    bareOperators: ['open', 'shut'],
    valueOperators: ['is not assigned to', 'is assigned to'],
    unaryFieldOperators: ['is not empty', 'is empty'],
    fields: [
      { name: 'Owner', operators: ['is', 'is not', 'is not empty', 'is empty'] },
      { name: 'Due', operators: ['is since'], value: 'date' },
    ],
    sortFields: ['Owner'],
    numberCriteria: false,
    fixedBetween: [],
    linkMatching: false,
    extraFields: null,
  };

  it('recognizes multi-word operators sharing prefixes', () => {
    const text = '"Owner" is not "a" or "Owner" is "b" or "Owner" is not empty or "Owner" is empty or is not assigned to "c"';
    expect(parseQuery(definition, text).criteria).toEqual({
      kind: 'or',
      left: {
        kind: 'or',
        left: {
          kind: 'or',
          left: {
            kind: 'or',
            left: { kind: 'field', field: 'Owner', operator: 'is not', value: 'a', column: 1 },
            right: { kind: 'field', field: 'Owner', operator: 'is', value: 'b', column: 23 },
          },
          right: { kind: 'field', field: 'Owner', operator: 'is not empty', value: null, column: 41 },
        },
        right: { kind: 'field', field: 'Owner', operator: 'is empty', value: null, column: 65 },
      },
      right: { kind: 'operator', operator: 'is not assigned to', value: 'c', column: 85 },
    });
  });

  it('and / or / order by end an operator phrase', () => {
    expect(parseQuery(definition, 'open and shut').criteria).toEqual({ kind: 'and', left: op('open', 1), right: op('shut', 10) });
  });

  it('a language without sort fields has no order by; one may refuse fuzzy text and name its texts', () => {
    const bare: LanguageDefinition = { ...definition, name: 'switches', noun: 'switch rule', sortFields: [], fuzzyCriteria: false };
    expect(parseQuery(definition, 'open order by "Owner"').orders).toEqual([{ field: 'Owner', direction: 'asc' }]);
    expect(() => parseQuery(bare, 'open order by "Owner"')).toThrow("Unexpected 'order' at column 6");
    expect(parseQuery(definition, 'open or ~x~').criteria).toMatchObject({ right: { kind: 'fuzzy', text: 'x' } });
    expect(() => parseQuery(bare, 'open or ~x~')).toThrow("Unexpected '~x~' at column 9");
    expect(() => parseQuery(bare, 'open or')).toThrow('Unexpected end of switch rule at column 8');
    expect(() => parseQuery(definition, 'open or')).toThrow('Unexpected end of query at column 8');
    expect(() => parseQuery(bare, `${'('.repeat(20_000)}open${')'.repeat(20_000)}`)).toThrow('Switch rule is nested too deeply');
  });

  it('a language may take fields by any name, as written, with its extra-field operators', () => {
    const open: LanguageDefinition = { ...definition, extraFields: { operators: ['is'], sortable: false, anyName: true } };
    expect(parseQuery(open, '"Build Flavor" is "x" or "owner" is "y"').criteria).toEqual({
      kind: 'or',
      left: { kind: 'field', field: 'Build Flavor', operator: 'is', value: 'x', column: 1 },
      right: { kind: 'field', field: 'Owner', operator: 'is', value: 'y', column: 26 },
    });
    expect(() => parseQuery(open, '"Build Flavor" is empty')).toThrow("Field 'Build Flavor' is not applicable for operator 'is empty'");
    expect(() => parseQuery(definition, '"Build Flavor" is "x"')).toThrow('Field not found: Build Flavor');
  });

  it('checks values with the fixed now', () => {
    expect(() => parseQuery(definition, '"Due" is since "soonish"')).toThrow('Unrecognized date: soonish');
    expect(parseQuery(definition, '"Due" is since "2 hours ago"', { now: new Date(0) }).criteria).toMatchObject({
      value: '2 hours ago',
    });
  });
});
