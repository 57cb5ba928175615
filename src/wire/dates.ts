import { BadRequest } from '../errors.js';

const MS_PER_DAY = 86_400_000;
/** 10000-01-01T00:00:00Z: from here on a year has more than four digits. */
const YEAR_10000 = 253_402_300_800_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Formats epoch milliseconds as the wire date of docs/compatibility.md#platform-json:
 * ISO-8601 UTC with milliseconds and a colon offset, `2024-05-01T12:34:56.789+00:00`.
 * Dates of 1970–9999 are formatted with integer arithmetic (the civil-from-days algorithm of
 * H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"), a third of the time of a `Date`
 * and `toISOString()`, which every date in an answer paid; other dates go through `Date`.
 */
export function toWireDate(ms: number): string;
export function toWireDate(ms: number | null): string | null;
export function toWireDate(ms: number | null): string | null {
  if (ms === null) return null;
  if (!(ms >= 0 && ms < YEAR_10000) || !Number.isInteger(ms)) return new Date(ms).toISOString().replace('Z', '+00:00');
  const days = Math.floor(ms / MS_PER_DAY);
  let rest = ms - days * MS_PER_DAY;
  // days since 0000-03-01 in 400-year eras; the year starts in March, so leap days come last
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}+00:00`;
}

/**
 * Reads a wire date: any ISO-8601 date or date-time (offset optional, UTC assumed) or epoch
 * milliseconds within years 0001–9999 (docs/compatibility.md#gitloom-differs-json). Returns epoch milliseconds; throws
 * BadRequest naming `field`.
 */
export function fromWireDate(value: unknown, field: string): number {
  // epoch milliseconds of years 0001–9999: what the wire format can write back
  if (typeof value === 'number' && value >= -62135596800000 && value <= 253402300799999) return Math.trunc(value);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/.test(value)) {
    const hasTime = value.length > 10;
    const hasZone = /(Z|[+-]\d{2}(:?\d{2})?)$/.test(value.slice(10));
    const normalized = hasTime ? value.replace(' ', 'T') : `${value}T00:00:00`;
    const ms = Date.parse(hasZone ? normalized : `${normalized}Z`);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new BadRequest(`Invalid date for '${field}': ${JSON.stringify(value)}`);
}
