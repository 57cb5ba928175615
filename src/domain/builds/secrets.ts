/**
 * Job secrets (reference/projects.md §3 `buildSetting.jobSecrets`): name/value pairs stored in a
 * project's setting and inherited from its ancestors by name (the nearest project wins).
 *
 * At rest each value is encrypted (src/domain/builds/secret-encryption.ts): the stored secret
 * carries `encryptedValue` instead of `value`. The API reads and writes plain `value`s as
 * before; only a running job receives the decrypted values.
 */
import type { Db } from '../../db/database.js';
import type { Context } from '../context.js';
import { ancestorPaths } from '../permissions.js';
import { decryptSecret, encryptSecret, isEncryptedSecret } from './secret-encryption.js';

interface StoredSecret {
  name?: unknown;
  value?: unknown;
  encryptedValue?: unknown;
  archived?: unknown;
}

function secretsOf(setting: Record<string, unknown>): StoredSecret[] | null {
  const build = setting.buildSetting;
  if (typeof build !== 'object' || build === null) return null;
  const list = (build as { jobSecrets?: unknown }).jobSecrets;
  return Array.isArray(list) ? (list as StoredSecret[]) : null;
}

function withSecrets<T extends Record<string, unknown>>(setting: T, map: (s: StoredSecret) => StoredSecret): T {
  const list = secretsOf(setting);
  if (!list) return setting;
  const jobSecrets = list.map((s) => (typeof s === 'object' && s !== null && !Array.isArray(s) ? map(s) : s));
  return { ...setting, buildSetting: { ...(setting.buildSetting as object), jobSecrets } };
}

/**
 * The stored form of a setting given through the API: each job secret's string `value` is
 * replaced by its `encryptedValue`; an `encryptedValue` sent by a client is dropped.
 */
export function sealJobSecrets<T extends Record<string, unknown>>(setting: T, key: Buffer): T {
  return withSecrets(setting, ({ value, encryptedValue: _client, ...rest }) =>
    (typeof value === 'string' ? { ...rest, encryptedValue: encryptSecret(key, value) } : { ...rest, ...(value !== undefined && { value }) }));
}

/** The API form of a stored setting: each `encryptedValue` decrypted back into `value`. */
export function revealJobSecrets<T extends Record<string, unknown>>(setting: T, key: Buffer): T {
  return withSecrets(setting, ({ encryptedValue, ...rest }) =>
    (isEncryptedSecret(encryptedValue) ? { ...rest, value: decryptSecret(key, encryptedValue) } : rest));
}

/** Whether a stored setting still holds a job secret value in plain text. */
function hasPlaintextSecret(setting: Record<string, unknown>): boolean {
  return (secretsOf(setting) ?? []).some((s) => typeof s === 'object' && s !== null && typeof s.value === 'string');
}

/**
 * Start-up step: encrypts the job secrets stored in plain text (by versions before encryption
 * at rest). Each project row is rewritten only if it did not change meanwhile (compare-and-set
 * on the setting text), so concurrent processes and requests never lose an update. Returns the
 * number of projects rewritten.
 */
export async function encryptPlaintextJobSecrets(db: Db, key: Buffer): Promise<number> {
  const rows = await db.selectFrom('projects').select(['id', 'setting']).where('setting', 'like', '%jobSecrets%').execute();
  let rewritten = 0;
  for (const row of rows) {
    if (!row.setting) continue;
    const setting = JSON.parse(row.setting) as Record<string, unknown>;
    if (!hasPlaintextSecret(setting)) continue;
    const done = await db.updateTable('projects').set({ setting: JSON.stringify(sealJobSecrets(setting, key)) })
      .where('id', '=', row.id).where('setting', '=', row.setting).executeTakeFirst();
    rewritten += Number(done.numUpdatedRows);
  }
  return rewritten;
}

/** The job secrets visible to builds of a project, by name, decrypted. */
export async function jobSecrets(ctx: Context, projectId: number, key: Buffer): Promise<Record<string, string>> {
  const project = await ctx.db.selectFrom('projects').select('path').where('id', '=', projectId).executeTakeFirst();
  if (!project) return {};
  const paths = ancestorPaths(project.path);
  const rows = await ctx.db.selectFrom('projects').select(['path', 'setting']).where('path', 'in', paths).execute();
  rows.sort((a, b) => a.path.length - b.path.length);
  const result: Record<string, string> = {};
  for (const row of rows) {
    if (!row.setting) continue;
    let secrets: StoredSecret[];
    try {
      secrets = secretsOf(JSON.parse(row.setting) as Record<string, unknown>) ?? [];
    } catch {
      continue;
    }
    for (const s of secrets) {
      if (typeof s.name !== 'string' || s.archived === true) continue;
      if (isEncryptedSecret(s.encryptedValue)) result[s.name] = decryptSecret(key, s.encryptedValue);
      else if (typeof s.value === 'string') result[s.name] = s.value;
    }
  }
  return result;
}
