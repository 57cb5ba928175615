/**
 * Quartz cron expressions of `!ScheduleTrigger` (docs/compatibility.md#builds-triggers: seconds first, 6 or 7
 * fields) evaluated with the `cron-parser` library. Quartz numbers days of week 1–7 from
 * Sunday; cron-parser 0–6, so numeric day-of-week values are shifted. The optional 7th field
 * (year) is accepted only as `*` (every year).
 */
import { createRequire } from 'node:module';
import type * as CronParser from 'cron-parser';

const require = createRequire(import.meta.url);
let cronParser: typeof CronParser.CronExpressionParser | undefined;

/** cron-parser (with luxon), loaded when a schedule is first read. */
function parser(): typeof CronParser.CronExpressionParser {
  cronParser ??= (require('cron-parser') as typeof CronParser).CronExpressionParser;
  return cronParser;
}

/** A cron expression that cannot be used. */
export class CronSyntaxError extends Error {}

function toCronParser(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  if (fields.length < 6 || fields.length > 7) {
    throw new CronSyntaxError(`expected a Quartz cron expression with 6 or 7 fields (seconds first), got '${expression}'`);
  }
  if (fields.length === 7) {
    if (fields[6] !== '*') throw new CronSyntaxError(`the year field of '${expression}' must be '*'`);
    fields.pop();
  }
  // Day of week: Quartz 1 = Sunday … 7 = Saturday; values after '/' (steps) or '#' (nth) are not days.
  fields[5] = fields[5].replace(/(^|[^/#\d])(\d+)/g, (_m, lead: string, n: string) => {
    const day = Number(n);
    if (day < 1 || day > 7) throw new CronSyntaxError(`day of week out of range (1-7) in '${expression}'`);
    return `${lead}${day - 1}`;
  });
  return fields.join(' ');
}

/**
 * Checks a Quartz cron expression.
 *
 * @throws CronSyntaxError with the reason.
 * @example validateCron('0 0 2 * * ?') // every day at 02:00:00
 */
export function validateCron(expression: string): void {
  try {
    parser().parse(toCronParser(expression), { tz: 'UTC' });
  } catch (error) {
    if (error instanceof CronSyntaxError) throw error;
    throw new CronSyntaxError(`invalid cron expression '${expression}': ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Fire times (epoch ms) of a cron expression in `(after, until]`, at most `limit` of them.
 * Times are evaluated in the server's time zone, as Quartz does.
 *
 * @throws CronSyntaxError for a bad expression.
 */
export function fireTimesBetween(expression: string, after: number, until: number, limit = 100): number[] {
  const converted = toCronParser(expression);
  let iterator;
  try {
    iterator = parser().parse(converted, { currentDate: new Date(after), endDate: new Date(until + 1) });
  } catch (error) {
    throw new CronSyntaxError(`invalid cron expression '${expression}': ${error instanceof Error ? error.message : String(error)}`);
  }
  const times: number[] = [];
  while (times.length < limit && iterator.hasNext()) {
    const t = iterator.next().getTime();
    if (t > until) break;
    if (t > after) times.push(t);
  }
  return times;
}
