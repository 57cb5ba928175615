/**
 * The Gitloom account of an external identity (docs/security.md#accounts-of-external-identities),
 * shared by the directory (LDAP) and OpenID Connect sign-ins: the linked user, else a new account
 * or the existing user owning the verified email (the connector's `accountPolicy`), then the
 * memberships synced to the identity's groups — all in one transaction with its audit rows.
 */
import type { ErrorCode } from '../../error-codes.js';
import { Conflict, GitloomError, Unauthorized } from '../../errors.js';
import type { Context } from '../context.js';
import { recordAudit } from '../audit/index.js';
import { syncMemberships } from '../access/index.js';
import { createExternalUser, type ExternalProfile, linkByVerifiedEmail, linkedUser, normalizeUserName, updateExternalFullName } from '../users/index.js';
import type { AccountPolicy } from './authenticator.js';

const CODE = 'GITLOOM_ERR_SSO_REFUSED' satisfies ErrorCode;

/** 401 `GITLOOM_ERR_SSO_REFUSED`: an external sign-in refused, with the reason to show. */
export const refused = (detail: string): Unauthorized => new Unauthorized(detail, { code: CODE });

/** The audit action of a sign-in through each kind of system (docs/audit-log.md#actions). */
export type SignInAction = 'signIn.ldap' | 'signIn.oidc';

/** An identity an external system vouched for, and what the connector says to do with it. */
export interface ExternalSignIn {
  action: SignInAction;
  profile: ExternalProfile;
  /** Whether the system says the email was verified (the directory's always is). */
  emailVerified: boolean;
  /** The system's group names, or null when the connector does not manage memberships. */
  groups: readonly string[] | null;
  /** The Gitloom group a new account joins when `groups` is null. */
  defaultGroup: string | null;
  accountPolicy: AccountPolicy;
}

/**
 * Records a refused external sign-in in the audit log (its own row: nothing else was written),
 * naming the login tried and the reason.
 */
export async function recordSignInFailure(ctx: Context, action: SignInAction, name: string, reason: string): Promise<void> {
  await recordAudit(ctx, ctx.db, { action, targetType: 'user', targetName: name, actor: { id: null, name }, after: { success: false, reason } });
}

/**
 * Signs in an external identity (see the module's notes) and returns its user. One transaction
 * writes the account or link, the full name, the memberships and the audit rows
 * (`user.createBySso` or `user.linkBySso`, then the sign-in action); a refusal writes nothing
 * but its failure row.
 *
 * @throws Unauthorized `GITLOOM_ERR_SSO_REFUSED` when the identity may not sign in: its name is
 *   no valid login name or another user's, its email another user's, or (linking) no verified
 *   email names a user.
 */
export async function signInExternal(ctx: Context, s: ExternalSignIn): Promise<{ id: number; name: string }> {
  const { profile } = s;
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const now = ctx.now();
      let user = await linkedUser(trx, profile.provider, profile.subject);
      let created = false;
      if (user) {
        await updateExternalFullName(trx, user.id, profile.fullName);
      } else if (s.accountPolicy === 'LINK_BY_EMAIL') {
        if (profile.email === null || !s.emailVerified) throw refused('No verified email address came with this sign-in: no account can be linked to it');
        user = await linkByVerifiedEmail(trx, profile.provider, profile.subject, profile.email, now);
        if (!user) throw refused(`No account has the verified email address '${profile.email}'; ask an administrator`);
        await updateExternalFullName(trx, user.id, profile.fullName);
        await recordAudit(ctx, trx, {
          action: 'user.linkBySso',
          targetType: 'user',
          targetId: user.id,
          targetName: user.name,
          actor: { id: user.id, name: user.name },
          after: { provider: profile.provider, subject: profile.subject, email: profile.email },
        });
      } else {
        const name = loginName(profile.name);
        const id = await createExternalUser(trx, { ...profile, name }, now);
        user = { id, name, fullName: profile.fullName };
        created = true;
        await recordAudit(ctx, trx, {
          action: 'user.createBySso',
          targetType: 'user',
          targetId: id,
          targetName: name,
          actor: { id, name },
          after: { provider: profile.provider, subject: profile.subject, name, fullName: profile.fullName, email: profile.email },
        });
      }
      const groups = s.groups ?? (created && s.defaultGroup !== null ? [s.defaultGroup] : null);
      const memberships = groups === null ? null : await syncMemberships(trx, user.id, groups);
      await recordAudit(ctx, trx, {
        action: s.action,
        targetType: 'user',
        targetId: user.id,
        targetName: user.name,
        actor: { id: user.id, name: user.name },
        after: { success: true, provider: profile.provider, ...(memberships && { groupsAdded: memberships.added, groupsRemoved: memberships.removed }) },
      });
      return { id: user.id, name: user.name };
    });
  } catch (error) {
    const refusal = error instanceof Conflict ? refused(error.message) : error;
    if (refusal instanceof GitloomError && refusal.status === 401) await recordSignInFailure(ctx, s.action, profile.name, refusal.message);
    throw refusal;
  }
}

/** The login name an external system proposes, validated; a refusal saying why when it is none. */
function loginName(proposed: string): string {
  try {
    return normalizeUserName(proposed);
  } catch (error) {
    throw refused(`'${proposed}' can not be a login name: ${(error as Error).message}`);
  }
}
