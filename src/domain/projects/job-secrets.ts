/**
 * Job secrets (docs/compatibility.md#projects-settings `buildSetting.jobSecrets`): name/value pairs stored in a
 * project's setting and inherited from its ancestors by name (the nearest project wins).
 *
 * At rest each value is encrypted (src/domain/projects/secret-encryption.ts): the stored secret
 * carries `encryptedValue` instead of `value`. The API reads and writes plain `value`s as
 * before; only a running job receives the decrypted values, and only those it is authorized
 * for (src/domain/builds/secrets.ts, docs/compatibility.md#gitloom-differs-untrusted-builds).
 */
import { parsePatternSet, PatternSyntaxError } from '../../ci/patterns.js';
import type { Db } from '../../db/database.js';
import type { ErrorCode } from '../../error-codes.js';
import { BadRequest } from '../../errors.js';
import { checkPatternLength, QuerySyntaxError, UserPatternError } from '../../query/index.js';
import type { AuditEvent } from '../audit/index.js';
import type { Context } from '../context.js';
import { type JobMatch, namesIn, parseJobMatch, patternsIn } from '../query/index.js';
import { ancestorSettings } from './ancestor-settings.js';
import { decryptSecret, encryptSecret, isEncryptedSecret } from './secret-encryption.js';
import { findUserIdByName } from '../users/index.js';
import { findGroupIdByName } from '../access/index.js';

export interface StoredSecret {
  name?: unknown;
  value?: unknown;
  encryptedValue?: unknown;
  authorizedBranches?: unknown;
  authorization?: unknown;
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
    typeof value === 'string' ? { ...rest, encryptedValue: encryptSecret(key, value) } : { ...rest, ...(value !== undefined && { value }) },
  );
}

/** The API form of a stored setting: each `encryptedValue` decrypted back into `value`. */
export function revealJobSecrets<T extends Record<string, unknown>>(setting: T, key: Buffer): T {
  return withSecrets(setting, ({ encryptedValue, ...rest }) =>
    isEncryptedSecret(encryptedValue) ? { ...rest, value: decryptSecret(key, encryptedValue) } : rest,
  );
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
    const done = await db
      .updateTable('projects')
      .set({ setting: JSON.stringify(sealJobSecrets(setting, key)) })
      .where('id', '=', row.id)
      .where('setting', '=', row.setting)
      .executeTakeFirst();
    rewritten += Number(done.numUpdatedRows);
  }
  return rewritten;
}

/**
 * The audit rows of a change of a project's job secrets (docs/audit-log.md#actions):
 * `jobSecret.create`, `jobSecret.update` and `jobSecret.delete` by secret name, between the
 * setting `before` (values revealed) and `after` (values in plain text, as given). A row holds the
 * secret's name, branches, authorization and archived flag, and for an update whether the value
 * changed — never a value.
 */
export function jobSecretAudits(before: Record<string, unknown>, after: Record<string, unknown>): AuditEvent[] {
  const byName = (setting: Record<string, unknown>) =>
    new Map((secretsOf(setting) ?? []).filter((x) => typeof x === 'object' && x !== null && typeof x.name === 'string').map((x) => [x.name as string, x]));
  const outline = ({ name, authorizedBranches = null, authorization = null, archived = false }: StoredSecret) => ({
    name,
    authorizedBranches,
    authorization,
    archived,
  });
  const [was, is] = [byName(before), byName(after)];
  const events: AuditEvent[] = [];
  const target = (name: string) => ({ targetType: 'jobSecret', targetName: name });
  for (const [name, secret] of is) {
    const old = was.get(name);
    if (!old) {
      events.push({ ...target(name), action: 'jobSecret.create', after: outline(secret) });
      continue;
    }
    const valueChanged = old.value !== secret.value;
    if (!valueChanged && JSON.stringify(outline(old)) === JSON.stringify(outline(secret))) continue;
    events.push({ ...target(name), action: 'jobSecret.update', before: outline(old), after: { ...outline(secret), valueChanged } });
  }
  for (const [name, secret] of was) if (!is.has(name)) events.push({ ...target(name), action: 'jobSecret.delete', before: outline(secret) });
  return events;
}

/** A secret's definition in force for a project: the nearest non-archived one of its name. */
export interface SecretDefinition {
  stored: StoredSecret;
  authorizedBranches: string | null;
  authorization: string | null;
}

const blankToNull = (text: unknown): string | null => (typeof text === 'string' && text.trim() !== '' ? text : null);

/** The job secrets of a project and its ancestors by name, the nearest project winning; archived ones left out. */
export async function hierarchySecrets(ctx: Context, projectPath: string): Promise<Map<string, SecretDefinition>> {
  const rows = await ancestorSettings(ctx.db, projectPath);
  const result = new Map<string, SecretDefinition>();
  for (const row of rows) {
    if (!row.setting) continue;
    let secrets: StoredSecret[];
    try {
      secrets = secretsOf(JSON.parse(row.setting) as Record<string, unknown>) ?? [];
    } catch {
      continue;
    }
    for (const s of secrets) {
      if (typeof s !== 'object' || s === null || typeof s.name !== 'string' || s.archived === true) continue;
      result.set(s.name, { stored: s, authorizedBranches: blankToNull(s.authorizedBranches), authorization: blankToNull(s.authorization) });
    }
  }
  return result;
}

/** Whether a stored secret has a value (encrypted, or plain from before encryption at rest). */
export const hasValue = (s: StoredSecret): boolean => isEncryptedSecret(s.encryptedValue) || typeof s.value === 'string';

/** A stored secret's value, decrypted (see {@link hasValue}). */
export function decryptedSecret(s: StoredSecret, key: Buffer): string {
  return isEncryptedSecret(s.encryptedValue) ? decryptSecret(key, s.encryptedValue) : String(s.value);
}

/**
 * Checks the job secrets of a setting about to be stored (docs/compatibility.md#projects-settings
 * `buildSetting.jobSecrets`): each must be an object; `authorizedBranches` null or a pattern
 * set (space-separated path wildcards, `-` excludes, src/ci/patterns.ts); `authorization` null or
 * a job match (job-match.ts) whose users and groups exist and whose branch and project
 * wildcards are at most 1,000 characters (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 *
 * @throws BadRequest naming the secret and field, e.g.
 *   `buildSetting.jobSecrets[0].authorizedBranches: Malformed pattern set: unterminated quote in '"main'`.
 */
export async function validateJobSecrets(db: Db, setting: Record<string, unknown>): Promise<void> {
  const build = setting.buildSetting;
  if (build === undefined || build === null) return;
  if (typeof build !== 'object' || Array.isArray(build)) throw new BadRequest('buildSetting must be an object');
  const list = (build as { jobSecrets?: unknown }).jobSecrets;
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw new BadRequest('buildSetting.jobSecrets must be an array');
  for (const [i, item] of list.entries()) {
    const where = `buildSetting.jobSecrets[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequest(`${where} must be an object`);
    const { authorizedBranches, authorization } = item as StoredSecret;
    for (const [field, text] of [
      ['authorizedBranches', authorizedBranches],
      ['authorization', authorization],
    ] as const) {
      if (text !== undefined && text !== null && typeof text !== 'string') throw new BadRequest(`${where}.${field} must be a string or null`);
    }
    if (typeof authorizedBranches === 'string') {
      try {
        parsePatternSet(authorizedBranches);
      } catch (e) {
        if (!(e instanceof PatternSyntaxError)) throw e;
        throw new BadRequest(`${where}.authorizedBranches: ${e.message}`);
      }
    }
    if (typeof authorization === 'string' && authorization.trim() !== '') await checkJobMatch(db, authorization, `${where}.authorization`);
  }
}

/**
 * Parses and checks a stored job match (a job secret's `authorization`, a job executor's
 * `jobRequirement`): it must parse (job-match.ts; `"Job" is` only with `options.jobCriteria`),
 * its branch, project and job wildcards must be at most 1,000 characters
 * (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input) and the users and groups
 * it names must exist.
 *
 * @param where the field's name, prefixed to every message (`buildSetting.jobSecrets[0].authorization`).
 * @param options.code the stable code of the refusal (default the generic one of 400).
 * @throws BadRequest `<where>: <reason>`, e.g. `jobExecutors[0].jobRequirement: Unable to find user with login: bob`.
 */
export async function checkJobMatch(db: Db, text: string, where: string, options: { jobCriteria?: boolean; code?: ErrorCode } = {}): Promise<JobMatch> {
  const refuse = (message: string): BadRequest => new BadRequest(`${where}: ${message}`, options.code && { code: options.code });
  let match: JobMatch;
  try {
    match = parseJobMatch(text, { jobCriteria: options.jobCriteria });
  } catch (e) {
    if (!(e instanceof QuerySyntaxError)) throw e;
    throw refuse(e.message);
  }
  for (const pattern of patternsIn(match)) {
    try {
      checkPatternLength(pattern);
    } catch (e) {
      if (!(e instanceof UserPatternError)) throw e;
      throw refuse(e.message);
    }
  }
  const { users, groups } = namesIn(match);
  for (const name of users) {
    if ((await findUserIdByName(db, name)) === undefined) throw refuse(`Unable to find user with login: ${name}`);
  }
  for (const name of groups) {
    if ((await findGroupIdByName(db, name)) === undefined) throw refuse(`Unable to find group: ${name}`);
  }
  return match;
}
