import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { QuerySyntaxError, parseIntegerValue, parseQueryDate } from '../../src/query/index.js';

const now = new Date('2024-05-15T10:30:00.000Z'); // a Wednesday

describe('parseQueryDate', () => {
  it.each([
    ['2024-01-31', '2024-01-31T00:00:00.000Z'],
    ['2024-01-31 10:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00Z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00+02:00', '2024-01-31T08:00:00.000Z'],
    ['Jan 31 2024', '2024-01-31T00:00:00.000Z'],
    ['today', '2024-05-15T00:00:00.000Z'],
    ['yesterday', '2024-05-14T00:00:00.000Z'],
    ['3 days ago', '2024-05-12T00:00:00.000Z'],
    ['last week', '2024-05-08T00:00:00.000Z'],
    ['2 hours ago', '2024-05-15T08:30:00.000Z'],
    ['  Yesterday ', '2024-05-14T00:00:00.000Z'],
  ])('%j → %s', (text, iso) => {
    expect(parseQueryDate(text, now).toISOString()).toBe(iso);
  });

  it('counts from the current time by default', () => {
    const before = Date.now();
    const today = parseQueryDate('today');
    expect(today.getTime()).toBeLessThanOrEqual(before);
    expect(before - today.getTime()).toBeLessThan(24 * 3600 * 1000 + 1000);
  });

  it.each(['whenever', '', '   ', '2024-01-31 junk', 'junk 2024-01-31', '2024-13-45'])('refuses %j', (text) => {
    expect(() => parseQueryDate(text, now)).toThrow(QuerySyntaxError);
    expect(() => parseQueryDate(text, now)).toThrow(`Unrecognized date: ${text}`);
  });
});

describe('parseIntegerValue', () => {
  it.each([
    ['3', 3],
    [' 42 ', 42],
    ['-7', -7],
    ['+5', 5],
    ['0', 0],
    ['-0', 0],
  ])('%j → %d', (text, value) => {
    expect(parseIntegerValue('Reply Count', text)).toBe(value);
  });

  it.each(['', 'two', '1.5', '1e3', '0x10', '99999999999999999999', '3 4'])('refuses %j', (text) => {
    let error: unknown;
    try {
      parseIntegerValue('Reply Count', text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as Error).message).toBe(`Invalid integer for field 'Reply Count': ${text}`);
  });
});
