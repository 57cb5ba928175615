import { createRequire } from 'node:module';
import type * as ChronoEn from 'chrono-node/en';
import { QuerySyntaxError } from './errors.js';

const require = createRequire(import.meta.url);
let chronoEn: typeof ChronoEn | undefined;

/** chrono-node's English parsers, loaded on first use (tens of milliseconds). */
function chrono(): typeof ChronoEn {
  chronoEn ??= require('chrono-node/en') as typeof ChronoEn;
  return chronoEn;
}

/**
 * Reads a natural-language date of a query value (`"Submit Date" is since "<text>"`):
 * `2024-01-31`, `2024-01-31 10:00`, `2024-01-31T10:00:00Z`, `Jan 31 2024`, `today`,
 * `yesterday`, `last week`, `3 days ago`, `2 hours ago`. Relative dates count from `now`.
 *
 * Dates are read in UTC. A date without a time of day (`2024-01-31`, `yesterday`,
 * `3 days ago`) means the start of that day, 00:00 UTC, so `is since "yesterday"` covers
 * all of yesterday. The whole text must be a date: `2024-01-31 junk` is refused.
 *
 * Implements the date values of docs/compatibility.md#projects-query-language, docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#builds-query-language and
 * docs/compatibility.md#code-comments-query-language (OneDev reads them with natty; Gitloom uses chrono-node).
 *
 * @throws QuerySyntaxError `Unrecognized date: <text>` when the text is not a date.
 */
export function parseQueryDate(text: string, now: Date = new Date()): Date {
  const trimmed = text.trim();
  const results = trimmed === '' ? [] : chrono().parse(trimmed, { instant: now, timezone: 'UTC' });
  const result = results[0];
  if (results.length !== 1 || result === undefined || result.index !== 0 || result.text !== trimmed) {
    throw new QuerySyntaxError(`Unrecognized date: ${text}`);
  }
  const date = result.start.date();
  if (Number.isNaN(date.getTime())) throw new QuerySyntaxError(`Unrecognized date: ${text}`);
  if (!result.start.isCertain('hour')) date.setUTCHours(0, 0, 0, 0);
  return date;
}

/** Range of the integer columns a query compares with (counts, numbers): PostgreSQL's int4. */
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/**
 * Reads the integer value of a count or number field (`"Comment Count" is greater than "2"`,
 * the `12` of `proj#12`): optional sign and decimal digits, surrounding whitespace ignored,
 * within the range of an integer column (int32).
 *
 * Implements the integer fields of docs/compatibility.md#pull-requests-query-language and docs/compatibility.md#code-comments-query-language / docs/compatibility.md#issues-query-language.
 *
 * @throws QuerySyntaxError `Invalid integer for field '<field>': <text>` otherwise.
 */
export function parseIntegerValue(field: string, text: string): number {
  const trimmed = text.trim();
  const value = /^[+-]?[0-9]+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < INT32_MIN || value > INT32_MAX) {
    throw new QuerySyntaxError(`Invalid integer for field '${field}': ${text}`);
  }
  return value || 0;
}
