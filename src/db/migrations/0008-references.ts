import { sql, type Kysely } from 'kysely';

/**
 * References between entities:
 * - `pull_request_fixed_issues`: the fix references of a pull request (docs/compatibility.md#pull-requests-fixed-issues),
 *   by origin (`COMMIT` for the commits its updates brought in, `TITLE`, `DESCRIPTION`), as the
 *   (project, number) they name, so `fixed-issue-ids`, `includes issue`, `fixed in pull request`
 *   and `/issues/{id}/pulls` are joins with `issues`; `pull_request_fixed_issue_backlog` lists
 *   the requests that existed before, to be indexed from their repositories;
 * - partial unique indexes making "referenced from" changes unique per (referenced, referencing)
 *   pair (docs/compatibility.md#pull-requests-sub-entities, docs/compatibility.md#fixed-issue-references). Their predicates are repeated verbatim
 *   by the `on conflict` clauses of src/domain/issues/references.ts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pull_request_fixed_issues')
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('pull_request_fixed_issues_pk', ['request_id', 'origin', 'project_id', 'number'])
    .execute();
  await db.schema.createIndex('pull_request_fixed_issues_issue').on('pull_request_fixed_issues').columns(['project_id', 'number']).execute();
  // Requests opened before the index existed: indexed from their repositories on first use.
  await db.schema
    .createTable('pull_request_fixed_issue_backlog')
    .addColumn('request_id', 'integer', (c) => c.primaryKey().references('pull_requests.id').onDelete('cascade'))
    .execute();
  await sql`insert into pull_request_fixed_issue_backlog (request_id) select id from pull_requests`.execute(db);

  await sql`create unique index issue_changes_reference on issue_changes (issue_id, data)
    where data like '{"@type":"IssueReferencedFrom%'`.execute(db);
  await sql`create unique index pull_request_changes_reference on pull_request_changes (request_id, data)
    where data like '{"@type":"PullRequestReferencedFrom%'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['pull_request_changes_reference', 'issue_changes_reference']) {
    await sql`drop index if exists ${sql.ref(index)}`.execute(db);
  }
  await db.schema.dropTable('pull_request_fixed_issue_backlog').execute();
  await db.schema.dropTable('pull_request_fixed_issues').execute();
}
