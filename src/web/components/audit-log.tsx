/**
 * The audit log as the administration page and a project's settings page show it
 * (docs/audit-log.md#page-and-api): a filter form (actor, action, target type, time range) sent
 * as query parameters, the rows newest first, and keyset paging by the last row's cursor.
 */
import type { AuditEventRow, AuditFilter, AuditPage } from '../../domain/audit/index.js';
import { BadRequest } from '../../errors.js';
import { auditCursor, parseAuditCursor } from '../../wire/audit-events.js';

/** Rows shown per page. */
export const AUDIT_PAGE_SIZE = 50;
const DAY_MS = 24 * 60 * 60_000;

/** A `YYYY-MM-DD` date of the filter form as epoch ms (UTC midnight), `plusDays` later; BadRequest for anything else. */
function dayOf(text: string | undefined, field: string, plusDays = 0): number | undefined {
  if (!text) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) throw new BadRequest(`${field}: not a date (YYYY-MM-DD): ${text}`);
  return ms + plusDays * DAY_MS;
}

/**
 * The filter and page of a page's query parameters: `actor`, `action`, `targetType`, `since`
 * and `until` (days, both included) and `before` (a row's cursor). Asks one row more than a page,
 * to know whether an older page exists. BadRequest for a malformed date or cursor.
 */
export function auditQueryOf(query: Record<string, string>): { filter: AuditFilter; page: AuditPage } {
  const text = (name: string) => query[name]?.trim() || undefined;
  const before = text('before');
  return {
    filter: {
      actor: text('actor'),
      action: text('action'),
      targetType: text('targetType'),
      since: dayOf(text('since'), 'From'),
      until: dayOf(text('until'), 'To', 1),
    },
    page: { before: before === undefined ? undefined : parseAuditCursor(before), count: AUDIT_PAGE_SIZE + 1 },
  };
}

const FILTERS = [
  ['actor', 'Actor', 'text', 'login name'],
  ['action', 'Action', 'text', 'e.g. user.update or user.*'],
  ['targetType', 'Target type', 'text', 'e.g. accessToken'],
  ['since', 'From', 'date', ''],
  ['until', 'To', 'date', ''],
] as const;

function when(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A summary's values as one line of compact JSON each (`before → after`). */
function Changes({ summary }: { summary: string | null }) {
  if (summary === null) return null;
  const { before, after } = JSON.parse(summary) as { before?: unknown; after?: unknown };
  return (
    <>
      {before !== undefined && <code class="audit-before">{JSON.stringify(before)}</code>}
      {before !== undefined && after !== undefined && ' → '}
      {after !== undefined && <code class="audit-after">{JSON.stringify(after)}</code>}
    </>
  );
}

/**
 * The filter form posting (GET) to `action`, the rows (`rows` as read with
 * {@link auditQueryOf}'s page: one more than shown means an older page) and the pager.
 */
export function AuditLog({ action, query, rows }: { action: string; query: Record<string, string>; rows: AuditEventRow[] }) {
  const shown = rows.slice(0, AUDIT_PAGE_SIZE);
  const filters = Object.fromEntries(FILTERS.map(([name]) => [name, query[name] ?? ''] as const).filter(([, v]) => v !== ''));
  const older = rows.length > AUDIT_PAGE_SIZE ? `${action}?${new URLSearchParams({ ...filters, before: auditCursor(shown[shown.length - 1]) })}` : null;
  return (
    <>
      <form method="get" action={action} class="audit-filter" role="search" aria-label="Filter the audit log">
        {FILTERS.map(([name, label, type, placeholder]) => (
          <p class="field" key={name}>
            <label for={`audit-${name}`}>{label}</label>
            <input id={`audit-${name}`} name={name} type={type as 'text'} value={query[name] ?? ''} placeholder={placeholder || undefined} />
          </p>
        ))}
        <p>
          <button type="submit">Filter</button>
        </p>
      </form>
      {shown.length === 0 ? (
        <p class="empty">No audit event found.</p>
      ) : (
        <div class="table-scroll">
          <table class="audit-log" aria-label="Audit events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Address</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.id}>
                  <td>
                    <time datetime={new Date(row.time).toISOString()}>{when(row.time)}</time>
                  </td>
                  <td>{row.actorName || '—'}</td>
                  <td title={row.userAgent ?? undefined}>{row.address ?? '—'}</td>
                  <td>
                    <code>{row.action}</code>
                  </td>
                  <td>{row.targetName ?? row.targetId ?? '—'}</td>
                  <td class="audit-changes">
                    <Changes summary={row.summary} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="pager">
        {query.before && <a href={`${action}?${new URLSearchParams(filters)}`}>Newest</a>}
        {older && <a href={older}>Older</a>}
      </p>
    </>
  );
}
