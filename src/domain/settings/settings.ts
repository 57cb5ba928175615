import type { Context } from '../context.js';

/** Security setting (reference/platform.md §6 defaults). */
export interface SecuritySetting {
  enableAnonymousAccess: boolean;
  enableSelfRegister: boolean;
  enableSelfDeregister: boolean;
  defaultLoginGroupId: number | null;
  enforce2FA: boolean;
}

const DEFAULT_SECURITY: SecuritySetting = {
  enableAnonymousAccess: false,
  enableSelfRegister: true,
  enableSelfDeregister: false,
  defaultLoginGroupId: null,
  enforce2FA: false,
};

async function readSetting<T extends object>(ctx: Pick<Context, 'db'>, key: string, defaults: T): Promise<T> {
  const row = await ctx.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? { ...defaults, ...(JSON.parse(row.value) as Partial<T>) } : defaults;
}

async function writeSetting(ctx: Pick<Context, 'db'>, key: string, value: object): Promise<void> {
  await ctx.db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value) }))
    .execute();
}

/** The security setting, defaults filled in. */
export function getSecuritySetting(ctx: Pick<Context, 'db'>): Promise<SecuritySetting> {
  return readSetting(ctx, 'security', DEFAULT_SECURITY);
}

/** Replaces the security setting (administrators only; checked by the caller's route). */
export async function setSecuritySetting(ctx: Pick<Context, 'db'>, setting: SecuritySetting): Promise<void> {
  await writeSetting(ctx, 'security', setting);
}
