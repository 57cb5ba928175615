/**
 * The frame and the change flow shared by the project settings pages (`/<project>/~settings/…`):
 * the section navigation, and running a change through the domain with a refusal shown in the
 * page (with the form's values kept) instead of a bare error page.
 */
import type { ComponentChildren } from 'preact';
import { BadRequest } from '../../../errors.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { SettingsFrame } from '../../components/settings.js';
import { redirect, submitForm, type PageResult, type ProjectPageContext } from '../../page.js';

/** The sections of the settings, in navigation order; `path` is relative to `/<project>/~settings`. */
const SECTIONS = [
  { section: 'general', label: 'General', path: '' },
  { section: 'members', label: 'Members', path: '/members' },
  { section: 'branch-protection', label: 'Branch protection', path: '/branch-protection' },
  { section: 'tag-protection', label: 'Tag protection', path: '/tag-protection' },
  { section: 'build', label: 'Build', path: '/build' },
  { section: 'labels', label: 'Labels', path: '/labels' },
  { section: 'milestones', label: 'Milestones', path: '/milestones' },
  { section: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { section: 'mirrors', label: 'Mirrors', path: '/mirrors' },
  { section: 'audit-log', label: 'Audit log', path: '/audit-log' },
] as const;

export type SettingsSection = (typeof SECTIONS)[number]['section'];

/** The URL of a settings section of the page's project. */
export function settingsUrl(page: ProjectPageContext, section: SettingsSection): string {
  return `/${page.project.path}/~settings${SECTIONS.find((s) => s.section === section)!.path}`;
}

/** A settings page: the project frame (Settings tab), the sections' navigation, the error, the content. */
export function SettingsLayout({
  page,
  section,
  error,
  children,
}: {
  page: ProjectPageContext;
  section: SettingsSection;
  error: string | null;
  children: ComponentChildren;
}) {
  const label = SECTIONS.find((s) => s.section === section)!.label;
  const links = SECTIONS.map((s) => ({ href: settingsUrl(page, s.section), label: s.label, current: s.section === section }));
  return (
    <ProjectLayout page={page} tab="settings" title={`${label} settings`} styles={['settings.css']}>
      <SettingsFrame navLabel="Settings" links={links} title={`${label} settings`} error={error}>
        {children}
      </SettingsFrame>
    </ProjectLayout>
  );
}

/** Renders a settings page; `error` is the refusal of a submitted form (null on GET). */
export type ShowSettings = (page: ProjectPageContext, error: string | null) => Promise<PageResult>;

/**
 * Runs a change submitted from a settings page. On success answers with a redirect (to `to`,
 * a URL or a function computing it after the change; by default the page itself); a refusal
 * shows the page again with the domain's message and status, the submitted values kept
 * ({@link submitForm}).
 */
export async function settingsChange(
  page: ProjectPageContext,
  show: ShowSettings,
  run: () => Promise<unknown>,
  to?: string | (() => string),
): Promise<PageResult> {
  return submitForm(
    page,
    run,
    () => redirect(typeof to === 'function' ? to() : (to ?? page.request.url.split('?')[0])),
    (message) => show(page, message),
  );
}

/**
 * The values a form shows: the submitted ones when `submitted` names this form and the page
 * shows a refusal, else `stored`.
 */
export function formValues(page: ProjectPageContext, error: string | null, form: string, stored: Record<string, string>): Record<string, string> {
  return error !== null && page.form.form === form ? page.form : stored;
}

/** Hidden field naming which form of a page was submitted (see {@link formValues}). */
export function FormName({ name }: { name: string }) {
  return <input type="hidden" name="form" value={name} />;
}

/**
 * The buttons of an entry's form (a protection, a secret, a webhook, a milestone): `add` on a new
 * entry; Save and Delete (`op=save` / `op=delete`, Delete skipping validation) on an existing one.
 */
export function SaveButtons({ add, editing }: { add: string; editing: boolean }) {
  return (
    <p class="buttons">
      <button type="submit" name="op" value="save">
        {editing ? 'Save' : add}
      </button>
      {editing && (
        <button type="submit" name="op" value="delete" class="danger" formnovalidate>
          Delete
        </button>
      )}
    </p>
  );
}

/** Whether a checkbox of the submitted form was checked. */
export const checked = (page: ProjectPageContext, name: string): boolean => page.form[name] === 'on';

/** A trimmed text field of the submitted form, null when empty. */
export function optionalText(page: ProjectPageContext, name: string): string | null {
  const value = (page.form[name] ?? '').trim();
  return value === '' ? null : value;
}

/**
 * An id chosen in the submitted form (a role, a label spec): null when empty; BadRequest
 * `Invalid <what>: <value>` unless it is digits (docs/compatibility.md#gitloom-differs-additions-to-the-interface: never a database error).
 */
export function chosenId(page: ProjectPageContext, name: string, what: string): number | null {
  const value = (page.form[name] ?? '').trim();
  if (value === '') return null;
  if (!/^\d{1,9}$/.test(value)) throw new BadRequest(`Invalid ${what}: ${value}`);
  return Number(value);
}
