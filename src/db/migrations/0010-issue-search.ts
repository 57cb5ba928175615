import { sql, type Kysely } from 'kysely';
import { isPostgres } from './columns.js';

/**
 * Substring search over issue titles, descriptions and comments (reference/comments-issues.md
 * §6.2: `~fuzzy~`, `"Title" contains`, `"Description" contains`, `"Comment" contains`) without
 * scanning every row, as migration 0007 does for pull requests: on SQLite, FTS5 trigram tables
 * kept in step by triggers and filled from the existing rows; on PostgreSQL, `pg_trgm` GIN indexes
 * on the lower-cased texts (skipped when the extension cannot be created: the queries still
 * work, only slower).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    const available = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (available.rows.length === 0) return;
    // The migration runs in a transaction: a refused CREATE EXTENSION (privileges) rolls back to
    // the savepoint and the migration carries on without the indexes.
    await sql`savepoint pg_trgm_issue_setup`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`release savepoint pg_trgm_issue_setup`.execute(db);
    } catch {
      await sql`rollback to savepoint pg_trgm_issue_setup`.execute(db);
      return;
    }
    await sql`create index issues_title_trgm on issues using gin (lower(title) gin_trgm_ops)`.execute(db);
    await sql`create index issues_description_trgm on issues using gin (lower(description) gin_trgm_ops)`.execute(db);
    await sql`create index issue_comments_content_trgm on issue_comments using gin (lower(content) gin_trgm_ops)`.execute(db);
    return;
  }
  await sql`create virtual table issue_search using fts5(title, description, tokenize = 'trigram')`.execute(db);
  await sql`insert into issue_search (rowid, title, description) select id, title, coalesce(description, '') from issues`.execute(db);
  await sql`create trigger issue_search_insert after insert on issues begin
    insert into issue_search (rowid, title, description) values (new.id, new.title, coalesce(new.description, ''));
  end`.execute(db);
  await sql`create trigger issue_search_update after update of title, description on issues begin
    update issue_search set title = new.title, description = coalesce(new.description, '') where rowid = new.id;
  end`.execute(db);
  await sql`create trigger issue_search_delete after delete on issues begin
    delete from issue_search where rowid = old.id;
  end`.execute(db);

  await sql`create virtual table issue_comment_search using fts5(content, tokenize = 'trigram')`.execute(db);
  await sql`insert into issue_comment_search (rowid, content) select id, content from issue_comments`.execute(db);
  await sql`create trigger issue_comment_search_insert after insert on issue_comments begin
    insert into issue_comment_search (rowid, content) values (new.id, new.content);
  end`.execute(db);
  await sql`create trigger issue_comment_search_update after update of content on issue_comments begin
    update issue_comment_search set content = new.content where rowid = new.id;
  end`.execute(db);
  await sql`create trigger issue_comment_search_delete after delete on issue_comments begin
    delete from issue_comment_search where rowid = old.id;
  end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const index of ['issue_comments_content_trgm', 'issues_description_trgm', 'issues_title_trgm']) {
      await sql`drop index if exists ${sql.ref(index)}`.execute(db);
    }
    return;
  }
  for (const trigger of [
    'issue_comment_search_delete', 'issue_comment_search_update', 'issue_comment_search_insert',
    'issue_search_delete', 'issue_search_update', 'issue_search_insert',
  ]) {
    await sql`drop trigger if exists ${sql.ref(trigger)}`.execute(db);
  }
  await sql`drop table if exists issue_comment_search`.execute(db);
  await sql`drop table if exists issue_search`.execute(db);
}
