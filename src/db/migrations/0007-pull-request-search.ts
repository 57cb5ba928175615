import { sql, type Kysely } from 'kysely';
import { isPostgres } from './columns.js';

/**
 * Substring search over pull request titles, descriptions and comments (reference/pulls.md §6:
 * `~fuzzy~`, `contains`) without scanning every row: on SQLite, FTS5 trigram tables kept in step
 * by triggers (their `LIKE '%…%'` uses the trigram index); on PostgreSQL, `pg_trgm` GIN indexes on
 * the lower-cased texts (skipped when the extension cannot be created: the queries still work,
 * only slower).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    const available = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (available.rows.length === 0) return;
    // The migration runs in a transaction: a refused CREATE EXTENSION (privileges) rolls back to
    // the savepoint and the migration carries on without the indexes.
    await sql`savepoint pg_trgm_setup`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`release savepoint pg_trgm_setup`.execute(db);
    } catch {
      await sql`rollback to savepoint pg_trgm_setup`.execute(db);
      return;
    }
    await sql`create index pull_requests_title_trgm on pull_requests using gin (lower(title) gin_trgm_ops)`.execute(db);
    await sql`create index pull_requests_description_trgm on pull_requests using gin (lower(description) gin_trgm_ops)`.execute(db);
    await sql`create index pull_request_comments_content_trgm on pull_request_comments using gin (lower(content) gin_trgm_ops)`.execute(db);
    return;
  }
  await sql`create virtual table pull_request_search using fts5(title, description, tokenize = 'trigram')`.execute(db);
  await sql`insert into pull_request_search (rowid, title, description) select id, title, coalesce(description, '') from pull_requests`.execute(db);
  await sql`create trigger pull_request_search_insert after insert on pull_requests begin
    insert into pull_request_search (rowid, title, description) values (new.id, new.title, coalesce(new.description, ''));
  end`.execute(db);
  await sql`create trigger pull_request_search_update after update of title, description on pull_requests begin
    update pull_request_search set title = new.title, description = coalesce(new.description, '') where rowid = new.id;
  end`.execute(db);
  await sql`create trigger pull_request_search_delete after delete on pull_requests begin
    delete from pull_request_search where rowid = old.id;
  end`.execute(db);

  await sql`create virtual table pull_request_comment_search using fts5(content, tokenize = 'trigram')`.execute(db);
  await sql`insert into pull_request_comment_search (rowid, content) select id, content from pull_request_comments`.execute(db);
  await sql`create trigger pull_request_comment_search_insert after insert on pull_request_comments begin
    insert into pull_request_comment_search (rowid, content) values (new.id, new.content);
  end`.execute(db);
  await sql`create trigger pull_request_comment_search_update after update of content on pull_request_comments begin
    update pull_request_comment_search set content = new.content where rowid = new.id;
  end`.execute(db);
  await sql`create trigger pull_request_comment_search_delete after delete on pull_request_comments begin
    delete from pull_request_comment_search where rowid = old.id;
  end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const index of ['pull_request_comments_content_trgm', 'pull_requests_description_trgm', 'pull_requests_title_trgm']) {
      await sql`drop index if exists ${sql.ref(index)}`.execute(db);
    }
    return;
  }
  for (const trigger of [
    'pull_request_comment_search_delete', 'pull_request_comment_search_update', 'pull_request_comment_search_insert',
    'pull_request_search_delete', 'pull_request_search_update', 'pull_request_search_insert',
  ]) {
    await sql`drop trigger if exists ${sql.ref(trigger)}`.execute(db);
  }
  await sql`drop table if exists pull_request_comment_search`.execute(db);
  await sql`drop table if exists pull_request_search`.execute(db);
}
