/**
 * The ref-change journal as backups and the consistency check read it (docs/backup.md "Consistency").
 */
import type { Db } from '../../db/database.js';
import type { RefJournalRow } from '../../db/schema.js';

/** A journal entry as a backup records it: which ref of which project moved from where to where, by whom. */
export type AppliedJournalEntry = Pick<RefJournalRow, 'id' | 'projectId' | 'ref' | 'oldHash' | 'newHash' | 'userId'>;

/** The applied journal entries (their ref moved) dated `since` (epoch ms) or later, in id order. */
export async function appliedJournalEntriesSince(db: Db, since: number): Promise<AppliedJournalEntry[]> {
  return db
    .selectFrom('refJournal')
    .select(['id', 'projectId', 'ref', 'oldHash', 'newHash', 'userId'])
    .where('date', '>=', since)
    .where('appliedDate', 'is not', null)
    .orderBy('id')
    .execute();
}

/** Which of the journal entry ids `ids` exist in this database (queried 500 at a time). */
export async function existingJournalIds(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const known = new Set<number>();
  for (let i = 0; i < ids.length; i += 500) {
    for (const row of await db
      .selectFrom('refJournal')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute())
      known.add(row.id);
  }
  return known;
}

/** Where the journal last put each ref of project `projectId`: the new hash of its latest applied entry, by full ref name. */
export async function journaledRefHeads(db: Db, projectId: number): Promise<Map<string, string | null>> {
  const rows = await db
    .selectFrom('refJournal')
    .select(['ref', 'newHash'])
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('refJournal')
        .select((e) => e.fn.max('id').as('id'))
        .where('projectId', '=', projectId)
        .where('appliedDate', 'is not', null)
        .groupBy('ref'),
    )
    .execute();
  return new Map(rows.map((r) => [r.ref, r.newHash]));
}

/** The refs of project `projectId` with a journal intent (an entry not applied yet: a ref change under way or interrupted). */
export async function refsWithIntents(db: Db, projectId: number): Promise<Set<string>> {
  return new Set(
    (await db.selectFrom('refJournal').select('ref').where('projectId', '=', projectId).where('appliedDate', 'is', null).execute()).map((r) => r.ref),
  );
}

/** The refs with journal entries the journal worker has not processed yet, as `{ projectId, ref }` (one per entry). */
export async function unprocessedJournalRefs(db: Db): Promise<{ projectId: number; ref: string }[]> {
  return db.selectFrom('refJournal').select(['projectId', 'ref']).where('processedDate', 'is', null).execute();
}
