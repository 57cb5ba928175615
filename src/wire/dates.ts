import { BadRequest } from '../errors.js';

/**
 * Formats epoch milliseconds as the wire date of reference/platform.md §4:
 * ISO-8601 UTC with milliseconds and a colon offset, `2024-05-01T12:34:56.789+00:00`.
 */
export function toWireDate(ms: number): string;
export function toWireDate(ms: number | null): string | null;
export function toWireDate(ms: number | null): string | null {
  if (ms === null) return null;
  return new Date(ms).toISOString().replace('Z', '+00:00');
}

/**
 * Reads a wire date: any ISO-8601 date or date-time (offset optional, UTC assumed) or epoch
 * milliseconds within years 0001–9999 (CONTRACT.md §2). Returns epoch milliseconds; throws
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
