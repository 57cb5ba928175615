/**
 * `/<project>/~settings/branch-protection` and `…/tag-protection`: the project's branch and tag
 * protection rules (docs/compatibility.md#projects-settings), each editable in its own form — a branch rule's
 * file protections (paths, required reviewers and builds) as numbered field groups, one blank for
 * adding, blank paths removing — deletable, and a form adding one. Saved through the function of
 * the API's Update Setting route, which validates them with its messages; stored fields the
 * forms do not show are kept.
 */
import { getProjectSetting, type ProjectSetting, updateProjectSetting } from '../../../domain/projects/index.js';
import { BadRequest } from '../../../errors.js';
import { Checkbox } from '../../components/controls.js';
import { Field, PostForm } from '../../components/forms.js';
import type { ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { checked, FormName, formValues, SettingsLayout, settingsChange, settingsUrl, SaveButtons } from './shared.js';

type Kind = 'branch' | 'tag';

/**
 * A field of a rule's form: a flag (checkbox; `on` is its default on a new rule), a text (empty
 * = null), a list (comma-separated strings) or a number (empty = null; anything else is passed
 * on for the domain to refuse with its message).
 */
type RuleField = { name: string; label: string; commitMessages?: boolean } & ({ type: 'flag'; on: boolean } | { type: 'text' | 'list' | 'number' });

const flag = (name: string, label: string, on: boolean): RuleField => ({ name, label, type: 'flag', on });
const input = (name: string, label: string, type: 'text' | 'list' | 'number'): RuleField => ({ name, label, type });
/** A field shown in the form's "Commit messages" group. */
const commitMessages = (field: RuleField): RuleField => ({ ...field, commitMessages: true });

/** What differs between the two kinds of rule (docs/compatibility.md#projects-branch-protection). */
const KINDS: Record<
  Kind,
  { list: 'branchProtections' | 'tagProtections'; section: 'branch-protection' | 'tag-protection'; pattern: string; patternLabel: string; fields: RuleField[] }
> = {
  branch: {
    list: 'branchProtections',
    section: 'branch-protection',
    pattern: 'branches',
    patternLabel: 'Branches (patterns, space-separated)',
    fields: [
      flag('preventForcedPush', 'Prevent forced push', true),
      flag('preventDeletion', 'Prevent deletion', true),
      flag('preventCreation', 'Prevent creation', true),
      flag('commitSignatureRequired', 'Require signed commits', false),
      input('reviewRequirement', 'Required reviewers (e.g. user(alice):1; empty for none)', 'text'),
      input('jobNames', 'Required builds (job names, comma-separated)', 'list'),
      flag('requireStrictBuilds', 'Required builds must run on the merged result', false),
      ...[
        flag('enforceConventionalCommits', 'Enforce conventional commits', false),
        input('commitTypes', 'Commit types (comma-separated; empty for any)', 'list'),
        input('commitScopes', 'Commit scopes (comma-separated; empty for any)', 'list'),
        input('maxCommitMessageLineLength', 'Longest commit message line (empty for no limit)', 'number'),
        flag('checkCommitMessageFooter', 'Check commit message footer', false),
        input('commitMessageFooterPattern', 'Footer pattern (regular expression)', 'text'),
        input('commitTypesForFooterCheck', 'Commit types whose footer is checked (comma-separated)', 'list'),
      ].map(commitMessages),
    ],
  },
  tag: {
    list: 'tagProtections',
    section: 'tag-protection',
    pattern: 'tags',
    patternLabel: 'Tags (patterns, space-separated)',
    fields: [
      flag('preventUpdate', 'Prevent update', true),
      flag('preventDeletion', 'Prevent deletion', true),
      flag('preventCreation', 'Prevent creation', true),
      flag('commitSignatureRequired', 'Require signed commits', false),
    ],
  },
};

type Rule = Record<string, unknown>;

/** Comma-separated text as a list of its non-empty, trimmed items. */
const listOf = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** The numbers `j` of a form's (or form values') `files-<j>-paths` fields with paths filled in, ascending. */
function fileEntries(values: Record<string, string>): number[] {
  return Object.keys(values)
    .map((key) => /^files-(\d{1,4})-paths$/.exec(key)?.[1])
    .filter((j): j is string => j !== undefined && values[`files-${j}-paths`].trim() !== '')
    .map(Number)
    .sort((a, b) => a - b);
}

/** A branch rule's file protections as the form's field groups describe them (blank paths dropped). */
function fileProtectionsFromForm(form: Record<string, string>): Rule[] {
  return fileEntries(form).map((j) => ({
    paths: form[`files-${j}-paths`].trim(),
    reviewRequirement: (form[`files-${j}-reviewRequirement`] ?? '').trim() || null,
    jobNames: listOf(form[`files-${j}-jobNames`] ?? ''),
  }));
}

/** A rule's fields as form values (`on`/`` for flags, lists joined by commas). */
function valuesOf(kind: Kind, rule: Rule): Record<string, string> {
  const k = KINDS[kind];
  const values: Record<string, string> = {
    enabled: rule.enabled === false ? '' : 'on',
    pattern: String(rule[k.pattern] ?? ''),
    userMatch: String(rule.userMatch ?? 'anyone'),
  };
  for (const field of k.fields) {
    const value = rule[field.name];
    if (field.type === 'flag') values[field.name] = value === true || (value === undefined && field.on) ? 'on' : '';
    else values[field.name] = Array.isArray(value) ? value.join(', ') : value === null || value === undefined ? '' : String(value);
  }
  if (kind === 'branch') {
    ((rule.fileProtections as Rule[] | undefined) ?? []).forEach((file, j) => {
      values[`files-${j}-paths`] = String(file.paths ?? '');
      values[`files-${j}-reviewRequirement`] = String(file.reviewRequirement ?? '');
      values[`files-${j}-jobNames`] = Array.isArray(file.jobNames) ? file.jobNames.join(', ') : '';
    });
  }
  return values;
}

/** The rule a form describes, over the stored one (stored fields the form lacks are kept). */
function ruleFromForm(page: ProjectPageContext, kind: Kind, stored: Rule): Rule {
  const k = KINDS[kind];
  const rule: Rule = {
    ...stored,
    enabled: checked(page, 'enabled'),
    [k.pattern]: (page.form.pattern ?? '').trim(),
    userMatch: (page.form.userMatch ?? '').trim() || 'anyone',
  };
  for (const field of k.fields) {
    const text = (page.form[field.name] ?? '').trim();
    if (field.type === 'flag') rule[field.name] = checked(page, field.name);
    else if (field.type === 'list') rule[field.name] = listOf(text);
    else if (field.type === 'number') rule[field.name] = text === '' ? null : /^\d{1,9}$/.test(text) ? Number(text) : text;
    else rule[field.name] = text === '' ? null : text;
  }
  if (kind === 'branch') rule.fileProtections = fileProtectionsFromForm(page.form);
  return rule;
}

/**
 * A branch rule's file protections: a field group per stored one (numbered as the form names
 * them) and a blank one for adding; a group whose paths are emptied is removed on saving.
 */
function FileProtectionFields({ values, id }: { values: Record<string, string>; id: (name: string) => string }) {
  const entries = fileEntries(values);
  const groups = [...entries, entries.length === 0 ? 0 : entries[entries.length - 1] + 1];
  return (
    <fieldset>
      <legend>File protections</legend>
      <p class="meta">Changes to these paths also need the reviewers and builds named here. Empty the paths to remove one.</p>
      {groups.map((j, n) => {
        const field = (name: string, label: string) => (
          <Field key={name} name={`files-${j}-${name}`} id={id(`files-${j}-${name}`)} label={label} value={values[`files-${j}-${name}`] ?? ''} />
        );
        const which = n < entries.length ? `File protection ${n + 1}` : 'New file protection';
        return (
          <div key={j} class="file-protection" role="group" aria-label={which}>
            {field('paths', `${which}: paths (patterns, space-separated)`)}
            {field('reviewRequirement', `${which}: required reviewers (e.g. user(alice):1)`)}
            {field('jobNames', `${which}: required builds (job names, comma-separated)`)}
          </div>
        );
      })}
    </fieldset>
  );
}

function RuleForm({ page, kind, index, values }: { page: ProjectPageContext; kind: Kind; index: number | null; values: Record<string, string> }) {
  const k = KINDS[kind];
  const id = (name: string) => `${kind}-${index ?? 'new'}-${name}`;
  const control = (f: RuleField) =>
    f.type === 'flag' ? (
      <Checkbox key={f.name} name={f.name} id={id(f.name)} label={f.label} checked={values[f.name] === 'on'} />
    ) : (
      <Field key={f.name} name={f.name} id={id(f.name)} label={f.label} value={values[f.name]} />
    );
  const title = index === null ? `New ${kind} protection` : `${kind === 'branch' ? 'Branch' : 'Tag'} protection ${index + 1}`;
  return (
    <PostForm page={page} action={settingsUrl(page, k.section)} label={title} class="settings-form rule">
      <FormName name={String(index ?? 'new')} />
      <input type="hidden" name="index" value={index === null ? '' : String(index)} />
      <Field name="pattern" id={id('pattern')} label={k.patternLabel} required value={values.pattern} />
      <Field name="userMatch" id={id('userMatch')} label="Applicable users (anyone, user(name), group(name))" value={values.userMatch} />
      <Checkbox name="enabled" id={id('enabled')} label="Enabled" checked={values.enabled === 'on'} />
      {k.fields.filter((f) => !f.commitMessages).map(control)}
      {k.fields.some((f) => f.commitMessages) && (
        <fieldset>
          <legend>Commit messages</legend>
          {k.fields.filter((f) => f.commitMessages).map(control)}
        </fieldset>
      )}
      {kind === 'branch' && <FileProtectionFields values={values} id={id} />}
      <SaveButtons add={`Add ${kind} protection`} editing={index !== null} />
    </PostForm>
  );
}

function showFor(kind: Kind) {
  return async (page: ProjectPageContext, error: string | null) => {
    const rules = (await getProjectSetting(page.ctx, page.project.id))[KINDS[kind].list] as Rule[];
    const fresh: Rule = { enabled: true, userMatch: 'anyone' };
    return (
      <SettingsLayout page={page} section={KINDS[kind].section} error={error}>
        <p class="meta">Rules apply to pushes from the git CLI and to changes made in the pages and the API; every matching rule applies.</p>
        {rules.length === 0 && <p class="empty">{`No ${kind} protection yet.`}</p>}
        {rules.map((rule, i) => (
          <details key={i} class="rule-item" open={error !== null && page.form.form === String(i)}>
            <summary>{`${String(rule[KINDS[kind].pattern])}${rule.enabled === false ? ' (disabled)' : ''}`}</summary>
            <RuleForm page={page} kind={kind} index={i} values={formValues(page, error, String(i), valuesOf(kind, rule))} />
          </details>
        ))}
        <h2>{`Add a ${kind} protection`}</h2>
        <RuleForm page={page} kind={kind} index={null} values={formValues(page, error, 'new', valuesOf(kind, fresh))} />
      </SettingsLayout>
    );
  };
}

function saveFor(kind: Kind) {
  const show = showFor(kind);
  return (page: ProjectPageContext) =>
    settingsChange(page, show, async () => {
      const setting: ProjectSetting = await getProjectSetting(page.ctx, page.project.id);
      const rules = [...(setting[KINDS[kind].list] as Rule[])];
      const index = page.form.index ? Number(page.form.index) : null;
      if (index !== null && !(Number.isInteger(index) && index >= 0 && index < rules.length)) {
        throw new BadRequest('This protection no longer exists: reload the page');
      }
      if (index === null) rules.push(ruleFromForm(page, kind, {}));
      else if (page.form.op === 'delete') rules.splice(index, 1);
      else rules[index] = ruleFromForm(page, kind, rules[index]);
      await updateProjectSetting(page.ctx, page.project.id, { ...setting, [KINDS[kind].list]: rules });
    });
}

/** `/~settings/branch-protection` and `/~settings/tag-protection` (GET; POST saves, adds or deletes one rule). */
export const protectionSettingsPages: ProjectPageRoute[] = (['branch', 'tag'] as const).flatMap((kind) => [
  { method: 'GET' as const, path: `/~settings/${KINDS[kind].section}`, handler: (page: ProjectPageContext) => showFor(kind)(page, null) },
  { method: 'POST' as const, path: `/~settings/${KINDS[kind].section}`, access: 'user' as const, handler: saveFor(kind) },
]);
