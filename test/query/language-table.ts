import { describe, expect, it } from 'vitest';
import { QUERY_LANGUAGES, QuerySyntaxError, parseQuery, type QueryLanguage } from '../../src/query/index.js';

/** A language as OneDev defines it, written out independently of src/query/languages.ts. */
export interface ReferenceLanguage {
  bare: string[];
  withValue: string[];
  /** Field → operators it accepts. */
  fields: Record<string, string[]>;
  /** Field operators that take no value. */
  unary: string[];
  /** Sample value per field (default `some*value`); date and count fields need readable values. */
  samples: Record<string, string>;
  sort: string[];
  numbers: boolean;
}

/** Fixed reference time for relative dates. */
export const NOW = new Date('2024-05-15T10:30:00.000Z');

/** Parses with the fixed `now`. */
export function parse(language: QueryLanguage, text: string) {
  return parseQuery(language, text, { now: NOW });
}

/** The error `parse` throws, for asserting message and column. */
export function parseError(language: QueryLanguage, text: string): QuerySyntaxError {
  try {
    parse(language, text);
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    return error as QuerySyntaxError;
  }
  throw new Error(`query parsed: ${text}`);
}

/** `words` joined by assorted whitespace, in alternating case: `tO\tbE \n rEvIeWeD`. */
function mangle(phrase: string): string {
  const separators = ['\t', '  ', '\n', ' \r\n '];
  return phrase
    .split(' ')
    .map((word, i) => (i % 2 === 0 ? word.toUpperCase() : word))
    .join(separators[phrase.length % separators.length]);
}

/**
 * Table tests for one language: every bare operator, value operator, field/operator pair and
 * sort field of OneDev is accepted with the expected AST (also in other case and with
 * other whitespace); every other field/operator pair and every non-sort field is refused with
 * the exact message; number criteria are accepted or refused; the definition holds exactly
 * OneDev's operators, fields and sort fields.
 */
export function describeLanguageTable(language: QueryLanguage, ref: ReferenceLanguage): void {
  const definition = QUERY_LANGUAGES[language];
  const fieldOperators = [...new Set(Object.values(ref.fields).flat())];

  describe(`${language}: definition`, () => {
    it('holds exactly the operators, fields and sort fields of OneDev', () => {
      expect([...definition.bareOperators].sort()).toEqual([...ref.bare].sort());
      expect([...definition.valueOperators].sort()).toEqual([...ref.withValue].sort());
      expect([...definition.sortFields].sort()).toEqual([...ref.sort].sort());
      expect([...definition.unaryFieldOperators].sort()).toEqual([...ref.unary].sort());
      expect(definition.numberCriteria).toBe(ref.numbers);
      const fields = Object.fromEntries(definition.fields.map((f) => [f.name, [...f.operators].sort()]));
      expect(fields).toEqual(Object.fromEntries(Object.entries(ref.fields).map(([k, v]) => [k, [...v].sort()])));
    });
  });

  describe(`${language}: bare operators`, () => {
    it.each(ref.bare)('%s', (operator) => {
      const expected = { criteria: { kind: 'operator', operator, value: null, column: 1 }, orders: [] };
      expect(parse(language, operator)).toEqual(expected);
      expect(parse(language, mangle(operator))).toEqual(expected);
    });
  });

  describe(`${language}: operators with a value`, () => {
    it.each(ref.withValue)('%s "value"', (operator) => {
      expect(parse(language, `${operator} "a\\"b*"`)).toEqual({
        criteria: { kind: 'operator', operator, value: 'a"b*', column: 1 },
        orders: [],
      });
      expect(parse(language, ` ${mangle(operator)}\t"x"`).criteria).toEqual({
        kind: 'operator',
        operator,
        value: 'x',
        column: 2,
      });
    });
  });

  const accepted = Object.entries(ref.fields).flatMap(([field, ops]) => ops.map((op) => [field, op]));
  describe(`${language}: field criteria`, () => {
    it.each(accepted)('"%s" %s', (field, operator) => {
      const unary = ref.unary.includes(operator);
      const value = ref.samples[field] ?? 'some*value';
      const text = unary ? `"${field}" ${operator}` : `"${field}" ${operator} "${value}"`;
      const expected = {
        kind: 'field',
        field,
        operator,
        value: unary ? null : value,
        column: 1,
      };
      expect(parse(language, text)).toEqual({ criteria: expected, orders: [] });
      const lenient = unary ? `"${field.toLowerCase()}"${mangle(operator)}` : `"${field.toUpperCase()}"\n${mangle(operator)}"${value}"`;
      expect(parse(language, lenient).criteria).toEqual(expected);
    });
  });

  const refused = Object.entries(ref.fields).flatMap(([field, ops]) => fieldOperators.filter((op) => !ops.includes(op)).map((op) => [field, op]));
  describe(`${language}: field criteria with an operator the field does not take`, () => {
    it.each(refused)('"%s" %s', (field, operator) => {
      const text = ref.unary.includes(operator) ? `"${field}" ${operator}` : `"${field}" ${operator} "1"`;
      const error = parseError(language, text);
      expect(error.message).toBe(`Field '${field}' is not applicable for operator '${operator}'`);
      expect(error.column).toBe(field.length + 4);
    });
  });

  describe(`${language}: order by`, () => {
    it.each(ref.sort)('"%s"', (field) => {
      expect(parse(language, `order by "${field}"`)).toEqual({ criteria: null, orders: [{ field, direction: 'asc' }] });
      expect(parse(language, `ORDER\tBy "${field.toLowerCase()}" DESC`).orders).toEqual([{ field, direction: 'desc' }]);
      expect(parse(language, `order by "${field}" asc and "${ref.sort[0]}" desc`).orders).toEqual([
        { field, direction: 'asc' },
        { field: ref.sort[0], direction: 'desc' },
      ]);
    });

    const unsortable = Object.keys(ref.fields).filter((f) => !ref.sort.includes(f));
    it.each(unsortable.length > 0 ? unsortable : ['Nope'])('refuses "%s"', (field) => {
      const error = parseError(language, `order by "${ref.sort[0]}" and "${field}"`);
      expect(error.message).toBe(`Can not order by field: ${field}`);
      expect(error.column).toBe(ref.sort[0].length + 17);
    });
  });

  describe(`${language}: number criteria`, () => {
    if (ref.numbers) {
      it('accepts #N and N', () => {
        expect(parse(language, '#42').criteria).toEqual({ kind: 'number', number: 42, column: 1 });
        expect(parse(language, '  42').criteria).toEqual({ kind: 'number', number: 42, column: 3 });
      });
    } else {
      it('refuses #N and N', () => {
        expect(parseError(language, '#42').message).toBe("Unexpected '#42' at column 1");
        expect(parseError(language, `${ref.bare[0]} or 42`).message).toBe(`Unexpected '42' at column ${ref.bare[0].length + 5}`);
      });
    }
  });

  describe(`${language}: unknown fields and operators`, () => {
    it('refuses an unknown field', () => {
      const error = parseError(language, `${ref.bare[0]} and "Foo" is "x"`);
      expect(error.message).toBe('Field not found: Foo');
      expect(error.column).toBe(ref.bare[0].length + 6);
    });

    it('refuses an unknown operator', () => {
      expect(parseError(language, `${ref.bare[0]} or frobnicated`).message).toBe(`Unexpected 'frobnicated' at column ${ref.bare[0].length + 5}`);
    });

    it('refuses a bare operator given a value and a value operator without one', () => {
      expect(parseError(language, `${ref.bare[0]} "x"`).message).toBe(`Unexpected '"x"' at column ${ref.bare[0].length + 2}`);
      expect(parseError(language, `${ref.withValue[0]} and ${ref.bare[0]}`).message).toBe(`Unexpected 'and' at column ${ref.withValue[0].length + 2}`);
    });
  });
}
