import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Build agents (docs/compatibility.md#build-agents; OneDev 8.6 `AgentToken`, `Agent`,
 * `AgentAttribute`):
 * - `agent_tokens`: the credential an agent connects with — its SHA-256 (`value_hash`, how a
 *   presented token is found) and the value encrypted as job secrets are (`encrypted_value`), so
 *   that administrators can read it again, as OneDev shows it;
 * - `agents`: one per token (a token's agent goes with it), with what the agent reported when it
 *   last connected (name, address, OS, architecture, CPUs, memory in bytes, its container engine
 *   or null), `paused`, the last use, and its connection: `session` (the id of its current
 *   connection, null when it never connected) and `online_until` (epoch ms; renewed by the
 *   agent's heartbeats, online while in the future);
 * - `agent_attributes`: name → value per agent, unique by name;
 * - `job_tokens`: the credential of one build running on an agent — what its job may do (fetch
 *   its commit, fetch its LFS objects, send its log, publish its artifacts, read its
 *   dependencies' artifacts, report its end) and nothing else; its SHA-256 only, the executor
 *   it runs on and the slots it takes of that executor on the agent; gone with the build.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('agent_tokens'))
    .addColumn('value_hash', 'text', (c) => c.notNull().unique())
    .addColumn('encrypted_value', 'text', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('agents'))
    .addColumn('token_id', 'integer', (c) => c.notNull().unique().references('agent_tokens.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('os_name', 'text', (c) => c.notNull())
    .addColumn('os_version', 'text', (c) => c.notNull())
    .addColumn('os_arch', 'text', (c) => c.notNull())
    .addColumn('cpus', 'integer', (c) => c.notNull())
    .addColumn('memory', 'bigint', (c) => c.notNull())
    .addColumn('engine', 'text')
    .addColumn('temporal', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_used_date', 'bigint', (c) => c.notNull())
    .addColumn('session', 'text')
    .addColumn('online_until', 'bigint')
    .execute();
  await db.schema.createIndex('agents_name').on('agents').column('name').execute();
  await withId(db, db.schema.createTable('agent_attributes'))
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addUniqueConstraint('agent_attributes_agent_name', ['agent_id', 'name'])
    .execute();
  await db.schema
    .createTable('job_tokens')
    .addColumn('build_id', 'integer', (c) => c.primaryKey().references('builds.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('executor', 'text', (c) => c.notNull())
    .addColumn('slots', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_tokens_agent').on('job_tokens').column('agent_id').execute();
  await db.schema.createIndex('builds_agent').on('builds').column('agent_id').execute();
}

/** Drops the agents' tables. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('builds_agent').ifExists().execute();
  for (const table of ['job_tokens', 'agent_attributes', 'agents', 'agent_tokens']) await db.schema.dropTable(table).ifExists().execute();
}
