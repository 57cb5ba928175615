/**
 * The frame and form parts of the settings areas: administration (`/~administration/…`) and
 * personal settings (`/~my/…`). A settings page is a `<SettingsLayout>` (the area's section
 * list beside the page), its forms use `<Field>` and the controls of controls.tsx; a POST route
 * is a {@link settingsPost}, which shows a refusal in the page with the domain's
 * message and the submitted values. The frame itself ({@link SettingsFrame}) serves a
 * project's settings too.
 */
import type { ComponentChildren } from 'preact';
import { BadRequest, NotFound, Unauthorized } from '../../errors.js';
import { redirect, submitForm, type PageContext, type PageResult, type PageRoute } from '../page.js';
import { Layout } from './layout.js';
import { Flash } from './flash.js';
import { HiddenFields, PostForm } from './forms.js';

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
      ['authenticator', 'Authenticator'],
      ['sso-connectors', 'Single sign-on'],
      ['label-specs', 'Labels'],
      ['job-executors', 'Job executors'],
      ['agents', 'Agents'],
      ['ssh', 'SSH'],
      ['audit-log', 'Audit log'],
    ],
  },
  my: {
    base: '/~my',
    label: 'My settings',
    sections: [
      ['profile', 'Profile'],
      ['avatar', 'Avatar'],
      ['password', 'Password'],
      ['two-factor', 'Two-factor authentication'],
      ['access-tokens', 'Access tokens'],
      ['sessions', 'Sessions'],
      ['ssh-keys', 'SSH keys'],
      ['saved-queries', 'Saved queries'],
      ['watches', 'Watches'],
      ['notifications', 'Notifications'],
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
  /** Client modules of src/web/assets the page needs (see `<Layout>`). */
  scripts?: string[];
  children: ComponentChildren;
}

/**
 * The frame of every settings page (the two areas here, a project's settings): the sections as a
 * navigation list named `navLabel` (under the heading `area`, when given; `current` marks the
 * page's), then the page's `<h1>`, its refusal and its content.
 */
export function SettingsFrame({
  navLabel,
  area,
  links,
  title,
  error,
  children,
}: {
  navLabel: string;
  area?: string;
  links: { href: string; label: string; current: boolean }[];
  title: string;
  error?: string | null;
  children: ComponentChildren;
}) {
  return (
    <div class="settings">
      <nav class="settings-nav" aria-label={navLabel}>
        {area && <p class="settings-area">{area}</p>}
        <ul>
          {links.map((link) => (
            <li key={link.href}>
              <a href={link.href} aria-current={link.current ? 'page' : undefined}>
                {link.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="settings-body">
        <h1>{title}</h1>
        <Flash error={error} />
        {children}
      </div>
    </div>
  );
}

/** A settings page: the area's sections as a navigation list, then the page with its `<h1>`. */
export function SettingsLayout({ page, area, section, title, error, scripts, children }: SettingsLayoutProps) {
  const { base, label, sections } = AREAS[area];
  const links = sections.map(([path, name]) => ({ href: `${base}/${path}`, label: name, current: path === section }));
  return (
    <Layout page={page} title={`${title} · ${label}`} styles={['admin.css']} scripts={scripts}>
      <SettingsFrame navLabel={label} area={label} links={links} title={title} error={error}>
        {children}
      </SettingsFrame>
    </Layout>
  );
}

/**
 * The deletion of an administration entry (a user, a group, a role): a heading, what `children`
 * say of it, and the form posting to `action` (with the `hidden` fields).
 */
export function DeleteSection({
  page,
  action,
  what,
  name,
  hidden = {},
  children,
}: {
  page: PageContext;
  action: string;
  what: string;
  name: string;
  hidden?: Record<string, string>;
  children?: ComponentChildren;
}) {
  return (
    <section aria-labelledby="delete-heading">
      <h2 id="delete-heading">{`Delete ${what}`}</h2>
      {children}
      <PostForm page={page} action={action} label={`Delete ${what}`}>
        <HiddenFields fields={hidden} />
        <p>
          <button type="submit" class="danger">{`Delete ${what} ${name}`}</button>
        </p>
      </PostForm>
    </section>
  );
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

/** Whether a checkbox of a submitted form was ticked. */
export function checked(form: Record<string, string>, name: string): boolean {
  return form[name] === 'on';
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

/**
 * A POST route of a settings area at `path` (see {@link settingsRoute}): runs `change`, which
 * answers (usually a redirect). A refusal (a 4xx domain error other than 401) is answered with
 * `again(page, message)` — the form shown again with the message — under the error's status;
 * other errors propagate to the error page ({@link submitForm}).
 */
export function settingsPost(
  area: SettingsArea,
  path: string,
  change: (page: PageContext) => Promise<PageResult>,
  again: (page: PageContext, message: string) => Promise<PageResult> | PageResult,
): PageRoute {
  return settingsRoute(area, 'POST', path, (page) =>
    submitForm(
      page,
      () => change(page),
      (result) => result,
      (message) => again(page, message),
    ),
  );
}

/**
 * A POST of an administration entry's page, `/~administration/<kind>/:id<path>` (kind `users`,
 * `groups`, `roles`): `run` with the entry's id, then back to the entry's page — or, for a
 * deletion (`back` `list`), to the kind's list; a refusal shows `again(page, message)`.
 */
export function entryChange(
  kind: string,
  path: string,
  run: (page: PageContext, id: number) => Promise<unknown>,
  again: (page: PageContext, message: string) => Promise<PageResult> | PageResult,
  back: 'entry' | 'list' = 'entry',
): PageRoute {
  return settingsPost(
    'administration',
    `/${kind}/:id${path}`,
    async (page) => {
      const id = idParam(page, 'id');
      await run(page, id);
      return redirect(back === 'list' ? `/~administration/${kind}` : `/~administration/${kind}/${id}`);
    },
    again,
  );
}
