import { describe, expect, it } from 'vitest';
import { toWireDate } from '../../src/wire/dates.js';

/** What the wire format is defined as: the engine's ISO-8601 form with a colon offset. */
const viaDate = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

describe('toWireDate', () => {
  it('formats as ISO-8601 UTC with milliseconds and +00:00', () => {
    expect(toWireDate(Date.UTC(2024, 4, 1, 12, 34, 56, 789))).toBe('2024-05-01T12:34:56.789+00:00');
    expect(toWireDate(null)).toBeNull();
  });

  it('agrees with Date for edges: epoch, leap days, century years, year ends, the last millisecond of 9999, before 1970', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      Date.UTC(2000, 1, 29),
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2000, 2, 1),
      Date.UTC(2100, 1, 28),
      Date.UTC(2100, 2, 1),
      Date.UTC(2024, 1, 29, 6),
      Date.UTC(2023, 11, 31, 23, 59, 59, 999),
      Date.UTC(2024, 0, 1),
      Date.UTC(2400, 1, 29),
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -86_400_001,
      Date.UTC(1, 0, 1),
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    ];
    for (const ms of edges) expect(toWireDate(ms)).toBe(viaDate(ms));
  });

  it('agrees with Date across the years 1970–9999', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(next() * 253_402_300_800_000);
      expect(toWireDate(ms)).toBe(viaDate(ms));
    }
  });
});
