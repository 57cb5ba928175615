/**
 * What each user chose of the diff view (docs/compatibility.md#diff-view): the layout of diffs
 * (unified or split), and the files of a pull request marked viewed, each on the blob it had
 * then — a mark counts only while the file's blob in the shown diff is still that one.
 */
import { BadRequest } from '../../errors.js';
import { requireUser } from '../actor.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { getPullRequest } from '../pulls/index.js';

/** How a diff is laid out: one column of old and new lines, or old beside new. */
export type DiffLayout = 'unified' | 'split';

/** The layout named by a query or form value, or null when it names none. */
export function parseDiffLayout(value: string | undefined): DiffLayout | null {
  return value === 'unified' || value === 'split' ? value : null;
}

/** The caller's chosen layout, or null for an anonymous caller or one who never chose. */
export async function getDiffLayout(ctx: Context): Promise<DiffLayout | null> {
  if (ctx.actor.userId === ANONYMOUS_ID) return null;
  const row = await ctx.db.selectFrom('diffViewPreferences').select('layout').where('userId', '=', ctx.actor.userId).executeTakeFirst();
  return row ? row.layout : null;
}

/**
 * Remembers the caller's layout of diffs.
 * @throws Unauthorized for an anonymous caller; BadRequest for a value other than `unified` or `split`.
 */
export async function setDiffLayout(ctx: Context, value: string): Promise<DiffLayout> {
  const userId = requireUser(ctx.actor);
  const layout = parseDiffLayout(value);
  if (!layout) throw new BadRequest(`Unknown diff layout: ${value} (unified or split)`);
  await ctx.db
    .insertInto('diffViewPreferences')
    .values({ userId, layout })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ layout }))
    .execute();
  return layout;
}

/**
 * The files of a pull request the caller marked viewed: path → the blob id the mark was made on
 * (empty for an anonymous caller). The caller compares it with the file's blob in the diff shown.
 */
export async function viewedFiles(ctx: Context, requestId: number): Promise<Map<string, string>> {
  if (ctx.actor.userId === ANONYMOUS_ID) return new Map();
  const rows = await ctx.db
    .selectFrom('viewedFiles')
    .select(['path', 'blobId'])
    .where('userId', '=', ctx.actor.userId)
    .where('requestId', '=', requestId)
    .execute();
  return new Map(rows.map((r) => [r.path, r.blobId]));
}

/** A blob id as a viewed mark holds it: 40 or 64 hex, or that prefixed `deleted:`. */
const MARK_BLOB = /^(?:deleted:)?(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Marks a file of a pull request viewed by the caller on blob `blobId`, or removes the mark.
 *
 * @param requestId the pull request (the caller must be able to read it).
 * @param path the file's path (its new path; the old one for a deleted file).
 * @param blobId the file's new blob id, or `deleted:<old blob id>` for a deleted file.
 * @throws Unauthorized for an anonymous caller; NotFound/Forbidden for a request the caller
 *   cannot read; BadRequest for an empty or overlong path or a malformed blob id.
 */
export async function setFileViewed(ctx: Context, requestId: number, path: string, blobId: string, viewed: boolean): Promise<void> {
  const userId = requireUser(ctx.actor);
  const pr = await getPullRequest(ctx, requestId);
  if (path === '' || path.length > 4096) throw new BadRequest('A file path is required (at most 4096 characters)');
  const where = ctx.db.deleteFrom('viewedFiles').where('userId', '=', userId).where('requestId', '=', pr.id).where('path', '=', path);
  if (!viewed) {
    await where.execute();
    return;
  }
  if (!MARK_BLOB.test(blobId)) throw new BadRequest(`Malformed blob id: ${blobId}`);
  await ctx.db
    .insertInto('viewedFiles')
    .values({ userId, requestId: pr.id, path, blobId, date: ctx.now() })
    .onConflict((oc) => oc.columns(['userId', 'requestId', 'path']).doUpdateSet({ blobId, date: ctx.now() }))
    .execute();
}
