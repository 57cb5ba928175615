/**
 * A user's email addresses with their roles (primary, git, unverified) and the buttons that change
 * them, shared by the administration's user page and the user's own profile: `base` is where the
 * buttons post (`<base>/email-addresses/<primary|git|delete>` with the address id), and
 * {@link emailAddressChange} is the route handler's part.
 */
import { deleteEmailAddress, type EmailAddress, setEmailAddressRole } from '../../domain/users/index.js';
import { NotFound } from '../../errors.js';
import type { PageContext } from '../page.js';
import { InlineForm } from './forms.js';
import { formId } from './settings.js';

/** A button posting `op` (primary, git, delete) for email address `id` of the user at `base`. */
function EmailAction({ page, base, id, op, label, children }: { page: PageContext; base: string; id: number; op: string; label: string; children: string }) {
  return (
    <InlineForm
      page={page}
      action={`${base}/email-addresses/${op}`}
      label={label}
      fields={{ id: String(id) }}
      buttonClass={op === 'delete' ? 'danger' : undefined}
      buttonLabel={label}
    >
      {children}
    </InlineForm>
  );
}

/**
 * The list of a user's addresses: a verified address that lacks a role offers it; any address but
 * the primary one can be removed.
 */
export function EmailAddressList({ page, base, emails }: { page: PageContext; base: string; emails: EmailAddress[] }) {
  if (emails.length === 0) return <p class="empty">No email address.</p>;
  return (
    <ul class="list" aria-label="Email addresses">
      {emails.map((e) => {
        const verified = e.verificationCode === null;
        return (
          <li key={e.id} class="row">
            <span>
              {e.value}
              {e.primary === 1 && <span class="badge">primary</span>}
              {e.git === 1 && <span class="badge">git</span>}
              {!verified && <span class="badge">unverified</span>}
            </span>
            <span class="actions">
              {verified && e.primary !== 1 && (
                <EmailAction page={page} base={base} id={e.id} op="primary" label={`Make ${e.value} primary`}>
                  Make primary
                </EmailAction>
              )}
              {verified && e.git !== 1 && (
                <EmailAction page={page} base={base} id={e.id} op="git" label={`Use ${e.value} for git`}>
                  Use for git
                </EmailAction>
              )}
              {e.primary !== 1 && (
                <EmailAction page={page} base={base} id={e.id} op="delete" label={`Remove ${e.value}`}>
                  Remove
                </EmailAction>
              )}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * Carries out a posted `<base>/email-addresses/:op` of {@link EmailAddressList} for user `userId`.
 *
 * @throws NotFound for an unknown op; the domain's errors (docs/compatibility.md#email-addresses-and-ssh-keys).
 */
export async function emailAddressChange(page: PageContext, userId: number): Promise<void> {
  const op = page.params.op;
  if (op === 'primary' || op === 'git') await setEmailAddressRole(page.ctx, userId, formId(page, 'email address'), op);
  else if (op === 'delete') await deleteEmailAddress(page.ctx, userId, formId(page, 'email address'));
  else throw new NotFound(`Page not found: ${page.request.url.split('?')[0]}`);
}
