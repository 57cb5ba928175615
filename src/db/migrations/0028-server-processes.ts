import type { Kysely } from 'kysely';

/**
 * The registry of live server processes (docs/architecture.md#start-up-recovery),
 * `server_processes`: one row per running server process, made when it starts and removed when it
 * stops cleanly — its id (the owner id of what it leases), host name, kernel (`<boot id>/<pid
 * namespace>`: where its pid means it), pid, start time in clock ticks since boot
 * (`/proc/<pid>/stat` field 22), when it registered and its last heartbeat (epoch ms).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_processes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('kernel', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('start_ticks', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat', 'bigint', (c) => c.notNull())
    .execute();
}

/** Drops the registry. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_processes').ifExists().execute();
}
