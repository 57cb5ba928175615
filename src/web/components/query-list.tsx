import { BadRequest } from '../../errors.js';
import type { PageContext } from '../page.js';

/** Rows per page of every paged list (pull requests, builds, issues, code comments, commits). */
export const PAGE_SIZE = 25;
/** The highest page number a link may name. */
const MAX_PAGE = 100_000;

/** One page of a query list, as {@link queryPage} reads it. */
export interface QueryPage<T> {
  /** The query as typed (`?query=`), or the list's default. */
  query: string;
  /** The 1-based page number (`?page=`). */
  number: number;
  /** At most {@link PAGE_SIZE} rows. */
  rows: T[];
  hasNext: boolean;
  /** The domain's message when it refused the query (the page then answers 400), else null. */
  error: string | null;
}

/**
 * The 1-based page number of a `page` query parameter: 1 when absent.
 *
 * @throws BadRequest `Invalid page: <text>` when it is not an integer in 1…100,000.
 */
export function pageNumber(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_PAGE) throw new BadRequest(`Invalid page: ${text}`);
  return n;
}

/**
 * Reads one page of a query list: the page's `query` (or `defaultQuery`) and `page` parameters,
 * then `read` with the offset of that page and one row more than a page, which tells whether a
 * next page exists. A query the domain refuses (BadRequest: a syntax error, an unknown field) is
 * no failure of the page: it answers 400 and shows the message under the query box.
 */
export async function queryPage<T>(
  page: PageContext,
  defaultQuery: string,
  read: (query: string, offset: number, count: number) => Promise<T[]>,
): Promise<QueryPage<T>> {
  const query = page.query.query ?? defaultQuery;
  const number = pageNumber(page.query.page);
  try {
    const rows = await read(query, (number - 1) * PAGE_SIZE, PAGE_SIZE + 1);
    return { query, number, rows: rows.slice(0, PAGE_SIZE), hasNext: rows.length > PAGE_SIZE, error: null };
  } catch (failure) {
    if (!(failure instanceof BadRequest)) throw failure;
    page.reply.code(400);
    return { query, number, rows: [], hasNext: false, error: failure.message };
  }
}

/** The previous and next page links of a query list at `action` (none when it has one page). */
export function Pager({ action, list }: { action: string; list: QueryPage<unknown> }) {
  if (list.number === 1 && !list.hasNext) return null;
  const href = (n: number) => `${action}?${new URLSearchParams({ ...(list.query && { query: list.query }), page: String(n) })}`;
  return (
    <nav class="pager" aria-label="Pages">
      {list.number > 1 && (
        <a href={href(list.number - 1)} rel="prev">
          Previous page
        </a>
      )}
      <span class="meta">{`Page ${list.number}`}</span>
      {list.hasNext && (
        <a href={href(list.number + 1)} rel="next">
          Next page
        </a>
      )}
    </nav>
  );
}
