/**
 * The frame and form parts of the settings areas: administration (`/~administration/…`) and
 * personal settings (`/~my/…`). A settings page is a `<SettingsLayout>` (the area's section
 * list beside the page), its forms use `<Field>`, `<CheckField>`, `<TextField>`; a POST runs
 * its change through {@link attempt}, which shows a refusal in the page with the domain's
 * message and the submitted values.
 */
import type { ComponentChildren } from 'preact';
import { BadRequest, GitloomError, NotFound, Unauthorized } from '../../errors.js';
import type { PageContext, PageResult, PageRoute } from '../page.js';
import { Layout } from './layout.js';

/** The two settings areas and their sections (path under the area, label). */
const AREAS = {
  administration: {
    base: '/~administration',
    label: 'Administration',
    sections: [
      ['users', 'Users'],
      ['groups', 'Groups'],
      ['roles', 'Roles'],
      ['security', 'Security'],
      ['label-specs', 'Labels'],
    ],
  },
  my: {
    base: '/~my',
    label: 'My settings',
    sections: [
      ['profile', 'Profile'],
      ['password', 'Password'],
      ['access-tokens', 'Access tokens'],
      ['ssh-keys', 'SSH keys'],
      ['saved-queries', 'Saved queries'],
      ['watches', 'Watches'],
    ],
  },
} as const;

export type SettingsArea = keyof typeof AREAS;

export interface SettingsLayoutProps {
  page: PageContext;
  area: SettingsArea;
  /** The current section (`users`, `access-tokens`, …). */
  section: string;
  title: string;
  /** A refusal to show above the page (the domain's message). */
  error?: string | null;
  children: ComponentChildren;
}

/** A settings page: the area's sections as a navigation list, then the page with its `<h1>`. */
export function SettingsLayout({ page, area, section, title, error, children }: SettingsLayoutProps) {
  const { base, label, sections } = AREAS[area];
  return (
    <Layout page={page} title={`${title} · ${label}`} styles={['admin.css']}>
      <div class="settings">
        <nav class="settings-nav" aria-label={label}>
          <p class="settings-area">{label}</p>
          <ul>
            {sections.map(([path, name]) => (
              <li key={path}>
                <a href={`${base}/${path}`} aria-current={path === section ? 'page' : undefined}>
                  {name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="settings-body">
          <h1>{title}</h1>
          {error && (
            <p class="flash error" role="alert">
              {error}
            </p>
          )}
          {children}
        </div>
      </div>
    </Layout>
  );
}

/**
 * Runs a form's change. A refusal (a 4xx domain error other than 401) is answered with
 * `again(message)` — the form shown again with the message — under the error's status; other
 * errors propagate to the error page.
 */
export async function attempt(
  page: PageContext,
  change: () => Promise<PageResult>,
  again: (message: string) => Promise<PageResult> | PageResult,
): Promise<PageResult> {
  try {
    return await change();
  } catch (error) {
    if (!(error instanceof GitloomError) || error.status >= 500 || error.status === 401) throw error;
    page.reply.code(error.status);
    return again(error.message);
  }
}

/** The signed-in user's id on a settings page (their routes are for signed-in users only). */
export function me(page: PageContext): number {
  if (!page.user) throw new Unauthorized();
  return page.user.id;
}

/** A numeric id from a path parameter; NotFound (404 page) for anything but digits in range. */
export function idParam(page: PageContext, name: string): number {
  const raw = page.params[name] ?? '';
  const id = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(id)) throw new NotFound(`Page not found: ${page.request.url.split('?')[0]}`);
  return id;
}

/**
 * A numeric id posted in form field `field` (default `id`), naming a `what` (e.g. `token`);
 * BadRequest `Invalid <what> id: …` for anything but digits in range.
 */
export function formId(page: PageContext, what: string, field = 'id'): number {
  const raw = page.form[field] ?? '';
  const id = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(id)) throw new BadRequest(`Invalid ${what} id: ${raw}`);
  return id;
}

/** A labelled checkbox, checked when `checked`; submits `on` when ticked (see {@link checked}). */
export function CheckField({ name, label, checked: on, id }: { name: string; label: string; checked: boolean; id?: string }) {
  const fieldId = id ?? `field-${name}`;
  return (
    <p class="check">
      <input type="checkbox" id={fieldId} name={name} value="on" checked={on} />
      <label for={fieldId}>{label}</label>
    </p>
  );
}

/** Whether a checkbox of a submitted form was ticked. */
export function checked(form: Record<string, string>, name: string): boolean {
  return form[name] === 'on';
}

/** A labelled multi-line text field. */
export function TextField({
  name,
  label,
  value,
  rows = 3,
  required,
  id,
}: {
  name: string;
  label: string;
  value?: string;
  rows?: number;
  required?: boolean;
  id?: string;
}) {
  const fieldId = id ?? `field-${name}`;
  return (
    <p class="field">
      <label for={fieldId}>{label}</label>
      <textarea id={fieldId} name={name} rows={rows} required={required}>
        {value ?? ''}
      </textarea>
    </p>
  );
}

/** A labelled `<select>` of `[value, label]` options. */
export function SelectField({
  name,
  label,
  value,
  options,
  id,
}: {
  name: string;
  label: string;
  value: string;
  options: readonly (readonly [string, string])[];
  id?: string;
}) {
  const fieldId = id ?? `field-${name}`;
  return (
    <p class="field">
      <label for={fieldId}>{label}</label>
      <select id={fieldId} name={name}>
        {options.map(([v, text]) => (
          <option key={v} value={v} selected={v === value}>
            {text}
          </option>
        ))}
      </select>
    </p>
  );
}

/**
 * A route of a settings area, at `path` under the area (`''` for the area itself): signed-in
 * users only; administration pages answer anybody but an administrator with the 404 page (their
 * existence is not advertised), personal pages act on the signed-in user.
 */
export function settingsRoute(area: SettingsArea, method: 'GET' | 'POST', path: string, handler: (page: PageContext) => Promise<PageResult>): PageRoute {
  const url = `${AREAS[area].base}${path}`;
  return {
    method,
    path: url,
    access: 'user',
    handler: async (page) => {
      if (area === 'administration' && !page.user?.isAdmin) throw new NotFound(`Page not found: ${page.request.url.split('?')[0]}`);
      return handler(page);
    },
  };
}
