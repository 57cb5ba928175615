import { trackChanges, type ChangeTracker, type Db } from '../../db/database.js';
import { BadRequest } from '../../errors.js';
import { requireAdmin } from '../actor.js';
import { pruneAuditEvents, recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';

/** Security setting (docs/compatibility.md#platform-first-boot defaults). */
export interface SecuritySetting {
  enableAnonymousAccess: boolean;
  enableSelfRegister: boolean;
  enableSelfDeregister: boolean;
  defaultLoginGroupId: number | null;
  enforce2FA: boolean;
  /** Days a web session lasts after sign-in (docs/compatibility.md#gitloom-differs-sessions-and-tokens); at least 1. */
  sessionTimeoutDays: number;
  /** Days an access token may live at most (a token without expiry gets this one); null: unbounded. */
  maxTokenLifetimeDays: number | null;
}

const DEFAULT_SECURITY: SecuritySetting = {
  enableAnonymousAccess: false,
  enableSelfRegister: true,
  enableSelfDeregister: false,
  defaultLoginGroupId: null,
  enforce2FA: false,
  sessionTimeoutDays: 14,
  maxTokenLifetimeDays: null,
};

/**
 * Settings are read on hot paths (every anonymous request, every actor): this process keeps
 * them while the `settings` table is unchanged — a write through this process is seen at once,
 * one through another process sharing a PostgreSQL database when its announcement arrives
 * (docs/architecture.md#processes-sharing-postgresql) — and for the tracker's `ttlMs` at most.
 */
interface CachedSetting {
  value: unknown;
  /** The tracker version read before the row was. */
  version: number;
  until: number;
}
const caches = new WeakMap<object, { tracker: ChangeTracker; entries: Map<string, CachedSetting> }>();

function cacheOf(db: Pick<Context, 'db'>['db']) {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { tracker: trackChanges(db, ['settings']), entries: new Map() }));
  return cache;
}

/** A setting's value: `read` turns the stored JSON (undefined when none is stored) into it. */
async function readSetting<T>(ctx: Pick<Context, 'db'>, key: string, read: (stored: unknown) => T): Promise<T> {
  const { tracker, entries } = cacheOf(ctx.db);
  const cached = entries.get(key);
  if (cached && cached.version === tracker.version && cached.until > Date.now()) return cached.value as T;
  const version = tracker.version;
  const row = await ctx.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  const value = read(row ? JSON.parse(row.value) : undefined);
  entries.set(key, { value, version, until: Date.now() + tracker.ttlMs });
  return value;
}

async function writeSetting(db: Db, key: string, value: object): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value) }))
    .execute();
}

/** The security setting, defaults filled in. */
export function getSecuritySetting(ctx: Pick<Context, 'db'>): Promise<SecuritySetting> {
  return readSetting(ctx, 'security', (stored) => ({ ...DEFAULT_SECURITY, ...(stored as Partial<SecuritySetting> | undefined) }));
}

/**
 * Replaces the security setting (administrators only; Forbidden otherwise), audited as
 * `securitySetting.update` with the values before and after (docs/audit-log.md#actions).
 */
export async function setSecuritySetting(ctx: Context, setting: SecuritySetting): Promise<void> {
  requireAdmin(ctx.actor);
  const before = await getSecuritySetting(ctx);
  await ctx.db.transaction().execute(async (tx) => {
    await writeSetting(tx, 'security', setting);
    await recordAudit(ctx, tx, { action: 'securitySetting.update', targetType: 'securitySetting', targetName: 'security', before, after: setting });
  });
}

/**
 * The job executors as stored (docs/compatibility.md#builds-job-executors): a list of JSON
 * objects in order, empty when none was ever set. The builds area checks, seals and reads them.
 */
export function getStoredJobExecutors(ctx: Pick<Context, 'db'>): Promise<readonly Record<string, unknown>[]> {
  return readSetting(ctx, 'jobExecutors', (stored) => (Array.isArray(stored) ? (stored as Record<string, unknown>[]) : []));
}

/**
 * Replaces the stored job executors (checked and sealed by the builds area; administrators only,
 * checked by the caller), audited as `jobExecutors.update` with each executor's type, name and
 * whether it is enabled before and after — never their registry logins.
 */
export async function setStoredJobExecutors(ctx: Context, executors: readonly Record<string, unknown>[]): Promise<void> {
  const outline = (list: readonly Record<string, unknown>[]) => list.map((e) => ({ '@type': e['@type'], name: e.name, enabled: e.enabled }));
  const before = await getStoredJobExecutors(ctx);
  await ctx.db.transaction().execute(async (tx) => {
    await writeSetting(tx, 'jobExecutors', executors);
    await recordAudit(ctx, tx, {
      action: 'jobExecutors.update',
      targetType: 'jobExecutors',
      targetName: 'job executors',
      before: outline(before),
      after: outline(executors),
    });
  });
}

/** The audit log's setting (docs/audit-log.md#retention): days rows are kept, 0 or null for ever. */
export interface AuditSetting {
  retentionDays: number | null;
}

/** The audit log's setting; by default rows are kept for ever. */
export function getAuditSetting(ctx: Pick<Context, 'db'>): Promise<AuditSetting> {
  return readSetting(ctx, 'auditLog', (stored) => ({ retentionDays: null, ...(stored as Partial<AuditSetting> | undefined) }));
}

/**
 * Replaces the audit log's setting (administrators only): `retentionDays` a whole number of days
 * from 0 to 36500 or null (BadRequest otherwise). Audited as `auditSetting.update`; the rows the
 * new retention no longer keeps are deleted in the same transaction, the retention loop deletes
 * the later ones (docs/audit-log.md#retention).
 */
export async function setAuditSetting(ctx: Context, setting: AuditSetting): Promise<void> {
  requireAdmin(ctx.actor);
  const days = setting.retentionDays;
  if (days !== null && (!Number.isInteger(days) || days < 0 || days > 36500)) {
    throw new BadRequest('Retention days must be a whole number from 0 to 36500 (0 or empty keeps every row)');
  }
  const before = await getAuditSetting(ctx);
  const after: AuditSetting = { retentionDays: days || null };
  await ctx.db.transaction().execute(async (tx) => {
    await writeSetting(tx, 'auditLog', after);
    await recordAudit(ctx, tx, { action: 'auditSetting.update', targetType: 'auditSetting', targetName: 'audit log', before, after });
    if (after.retentionDays) await pruneAuditEvents(tx, ctx.now() - after.retentionDays * 24 * 60 * 60_000);
  });
}

/**
 * The external authenticator as stored (docs/security.md#single-sign-on): one JSON object, its
 * secret sealed; null when none is set. The sso area checks, seals and reads it.
 */
export function getStoredAuthenticator(ctx: Pick<Context, 'db'>): Promise<object | null> {
  return readSetting(ctx, 'authenticator', (stored) => (typeof stored === 'object' && stored !== null ? stored : null));
}

/** Replaces the stored authenticator, or removes it (null); checked by the sso area, administrators only. */
export async function setStoredAuthenticator(ctx: Pick<Context, 'db'>, authenticator: object | null): Promise<void> {
  if (authenticator === null) await ctx.db.deleteFrom('settings').where('key', '=', 'authenticator').execute();
  else await writeSetting(ctx.db, 'authenticator', authenticator);
}

/**
 * The SSO connectors as stored (docs/security.md#single-sign-on): a list of JSON objects in
 * order, their secrets sealed; empty when none was ever set. The sso area checks, seals and reads them.
 */
export function getStoredSsoConnectors(ctx: Pick<Context, 'db'>): Promise<readonly object[]> {
  return readSetting(ctx, 'ssoConnectors', (stored) => (Array.isArray(stored) ? (stored as object[]) : []));
}

/** Replaces the stored SSO connectors (checked by the sso area; administrators only). */
export async function setStoredSsoConnectors(ctx: Pick<Context, 'db'>, connectors: readonly object[]): Promise<void> {
  await writeSetting(ctx.db, 'ssoConnectors', connectors);
}
