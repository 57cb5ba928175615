import type { Db } from '../../db/database.js';
import type { ProjectRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { uniquely } from '../unique.js';
import { secretKey } from './secret-encryption.js';
import { jobSecretAudits, revealJobSecrets, sealJobSecrets, validateJobSecrets } from './job-secrets.js';
import { auditChanges, recordAudit, type AuditEvent } from '../audit/index.js';
import type { Context } from '../context.js';
import { normalizeWebHooks } from './webhook-settings.js';
import { loadProjectWith } from './permissions.js';
import { validateBranchProtectionRules, validateTagProtectionRules } from './protection-validation.js';

/**
 * The ProjectSetting of docs/compatibility.md#projects-settings, stored as JSON in `projects.setting` (the
 * service desk name also in its own unique column). Branch and tag protections are normalized
 * with their defaults; the other parts are stored as given (unknown parts kept verbatim).
 */
export type ProjectSetting = Record<string, unknown> & {
  serviceDeskName: string | null;
  branchProtections: BranchProtection[];
  tagProtections: TagProtection[];
};

/** BranchProtection (docs/compatibility.md#projects-settings), defaults filled in. */
export interface BranchProtection {
  enabled: boolean;
  branches: string;
  userMatch: string;
  preventForcedPush: boolean;
  preventDeletion: boolean;
  preventCreation: boolean;
  commitSignatureRequired: boolean;
  reviewRequirement: string | null;
  jobNames: string[];
  [extra: string]: unknown;
}

/** TagProtection (docs/compatibility.md#projects-settings), defaults filled in. */
export interface TagProtection {
  enabled: boolean;
  tags: string;
  userMatch: string;
  preventUpdate: boolean;
  preventDeletion: boolean;
  preventCreation: boolean;
  commitSignatureRequired: boolean;
  [extra: string]: unknown;
}

const BRANCH_PROTECTION_DEFAULTS = {
  enabled: true,
  branches: '',
  userMatch: 'anyone',
  preventForcedPush: true,
  preventDeletion: true,
  preventCreation: true,
  commitSignatureRequired: false,
  enforceConventionalCommits: false,
  commitTypes: [],
  commitScopes: [],
  checkCommitMessageFooter: false,
  commitMessageFooterPattern: null,
  commitTypesForFooterCheck: [],
  maxCommitMessageLineLength: null,
  reviewRequirement: null,
  jobNames: [],
  fileProtections: [],
  requireStrictBuilds: false,
};

const TAG_PROTECTION_DEFAULTS = {
  enabled: true,
  tags: '',
  userMatch: 'anyone',
  preventUpdate: true,
  preventDeletion: true,
  preventCreation: true,
  commitSignatureRequired: false,
};

const q = (name: string, query: string | null) => ({ name, query });
const DEFAULT_COMMIT_QUERIES = [
  q('All', null),
  q('Default branch', 'default-branch'),
  q('Authored by me', 'authored-by-me'),
  q('Committed by me', 'committed-by-me'),
  q('Committed recently', 'after(last week)'),
];
const DEFAULT_CODE_COMMENT_QUERIES = [
  q('Unresolved', 'unresolved'),
  q('Created by me', 'created by me'),
  q('Mentioned me', 'mentioned me'),
  q('Created recently', '"Create Date" is since "last week"'),
  q('Has activity recently', '"Update Date" is since "last week"'),
  q('Resolved', 'resolved'),
  q('All', null),
];

/** The setting of a project that never stored one (docs/compatibility.md#projects-settings defaults). */
function defaults(): ProjectSetting {
  return {
    serviceDeskName: null,
    branchProtections: [],
    tagProtections: [],
    issueSetting: { listFields: null, listLinks: null, boardSpecs: null, namedQueries: null },
    buildSetting: { listParams: null, namedQueries: null, jobProperties: [], jobSecrets: [], buildPreservations: [], defaultFixedIssueFilters: [] },
    pullRequestSetting: { namedQueries: null, defaultMergeStrategy: null },
    namedCommitQueries: DEFAULT_COMMIT_QUERIES,
    namedCodeCommentQueries: DEFAULT_CODE_COMMENT_QUERIES,
    webHooks: [],
    contributedSettings: {},
  };
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest(`${what} must be an object`);
  return value as Record<string, unknown>;
}

function normalizeList<T>(value: unknown, what: string, defaultsOf: Record<string, unknown>, required: string): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new BadRequest(`${what} must be an array`);
  return value.map((item, i) => {
    const object = asObject(item, `${what}[${i}]`);
    const merged = { ...defaultsOf, ...object };
    for (const [key, def] of Object.entries(defaultsOf)) {
      const v = merged[key];
      if (typeof def === 'boolean' && typeof v !== 'boolean') throw new BadRequest(`${what}[${i}].${key} must be a boolean`);
      if (typeof def === 'string' && typeof v !== 'string') throw new BadRequest(`${what}[${i}].${key} must be a string`);
      if (Array.isArray(def) && !Array.isArray(v)) throw new BadRequest(`${what}[${i}].${key} must be an array`);
    }
    if ((merged[required] as string).trim() === '') throw new BadRequest(`${what}[${i}].${required} is required`);
    return merged as T;
  });
}

/** Reads a project's effective setting from its row (defaults for parts never set). */
export function settingOf(project: Pick<ProjectRow, 'setting' | 'serviceDeskName'>): ProjectSetting {
  const stored = project.setting ? (JSON.parse(project.setting) as Record<string, unknown>) : {};
  return { ...defaults(), ...stored, serviceDeskName: project.serviceDeskName } as ProjectSetting;
}

/**
 * The stored setting JSON of the projects at some paths (exact paths, one query, no permission
 * check), for readers walking a project's ancestors (docs/compatibility.md#query-personalizations "Keys").
 *
 * @returns the stored text (null when never set) by path; unknown paths are absent.
 */
export async function storedSettingsByPath(db: Db, paths: readonly string[]): Promise<Map<string, string | null>> {
  if (paths.length === 0) return new Map();
  const rows = await db.selectFrom('projects').select(['path', 'setting']).where('path', 'in', paths).execute();
  return new Map(rows.map((r) => [r.path, r.setting]));
}

/** Get Setting (docs/compatibility.md#projects-endpoints item 4): manage permission; job secret values decrypted. */
export async function getProjectSetting(ctx: Context, projectId: number): Promise<ProjectSetting> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  return revealJobSecrets(settingOf(project), secretKey(ctx.config));
}

/**
 * Update Setting (docs/compatibility.md#projects-endpoints item 14): manage permission; a full replacement — omitted
 * parts get their defaults, `contributedSettings` in the body is ignored (the stored one stays).
 * Job secret values are stored encrypted (src/domain/builds/secrets.ts).
 * Protections (their branch, tag and path patterns included) and job secrets' branch limits are
 * validated (400, naming the field) and completed with their defaults; a service desk name used
 * by another project is 409.
 */
export async function updateProjectSetting(ctx: Context, projectId: number, body: Record<string, unknown>): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'manage');
  const previous = settingOf(project);
  const serviceDeskName = body.serviceDeskName ?? null;
  if (serviceDeskName !== null && (typeof serviceDeskName !== 'string' || serviceDeskName.trim() === '')) {
    throw new BadRequest('serviceDeskName must be a non-empty string or null');
  }
  const { contributedSettings: _ignored, ...rest } = body;
  const base = defaults();
  const setting: ProjectSetting = {
    ...base,
    namedCommitQueries: [],
    namedCodeCommentQueries: [],
    ...rest,
    serviceDeskName: serviceDeskName as string | null,
    branchProtections: normalizeList<BranchProtection>(body.branchProtections, 'branchProtections', BRANCH_PROTECTION_DEFAULTS, 'branches'),
    tagProtections: normalizeList<TagProtection>(body.tagProtections, 'tagProtections', TAG_PROTECTION_DEFAULTS, 'tags'),
    webHooks: normalizeWebHooks(body.webHooks),
    contributedSettings: previous.contributedSettings,
  };
  setting.branchProtections.forEach((p, i) => validateBranchProtectionRules(p, `branchProtections[${i}]`));
  setting.tagProtections.forEach((p, i) => validateTagProtectionRules(p, `tagProtections[${i}]`));
  await validateJobSecrets(ctx.db, setting);
  const revealed = revealJobSecrets(previous, secretKey(ctx.config));
  await ctx.db.transaction().execute(async (tx) => {
    await saveSetting(tx, project.id, sealJobSecrets(setting, secretKey(ctx.config)));
    for (const event of settingAudits(revealed, setting)) {
      await recordAudit(ctx, tx, { ...event, targetId: project.id, targetName: `${project.path}:${event.targetName}`, projectId: project.id });
    }
  });
}

/** The parts of a setting audited on their own; the rest is `projectSetting.update`. */
const AUDITED_PARTS = ['branchProtections', 'tagProtections', 'webHooks'] as const;

/**
 * The audit rows of a change of a project's setting (docs/audit-log.md#actions), between `before`
 * and `after` (job secret values in plain text in both, so changes are seen; they are never in a
 * row): `branchProtections.update`, `tagProtections.update`, `webHooks.update` (without their
 * secrets) with the list before and after, the job secrets' rows (src/domain/projects/job-secrets.ts),
 * and `projectSetting.update` with the other parts that changed. Target names are the part's.
 */
function settingAudits(before: Record<string, unknown>, after: Record<string, unknown>): AuditEvent[] {
  const events: AuditEvent[] = [];
  const hooks = (value: unknown) => (Array.isArray(value) ? value.map(({ secret: _secret, ...hook }: Record<string, unknown>) => hook) : value);
  for (const part of AUDITED_PARTS) {
    const [was, is] = part === 'webHooks' ? [hooks(before[part]), hooks(after[part])] : [before[part], after[part]];
    if (JSON.stringify(was) !== JSON.stringify(is)) events.push({ action: `${part}.update`, targetType: part, targetName: part, before: was, after: is });
  }
  events.push(...jobSecretAudits(before, after));
  const rest = (setting: Record<string, unknown>) => {
    const { branchProtections: _b, tagProtections: _t, webHooks: _w, contributedSettings: _c, buildSetting, ...others } = setting;
    const { jobSecrets: _s, ...build } = (buildSetting ?? {}) as Record<string, unknown>;
    return { ...others, buildSetting: build };
  };
  const changes = auditChanges(rest(before), rest(after));
  if (Object.keys(changes.after).length > 0) events.push({ action: 'projectSetting.update', targetType: 'projectSetting', targetName: 'setting', ...changes });
  return events;
}

async function saveSetting(db: Db, projectId: number, setting: ProjectSetting): Promise<void> {
  const { serviceDeskName, ...stored } = setting;
  await uniquely(`Service desk name already used by another project: ${serviceDeskName}`, () =>
    db
      .updateTable('projects')
      .set({ setting: JSON.stringify(stored), serviceDeskName })
      .where('id', '=', projectId)
      .execute(),
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A user or group named in protections: `user(<name>)` / `group(<name>)`. */
export type PrincipalKind = 'user' | 'group';

const escapeName = (name: string) => name.replace(/[()\\]/g, (c) => `\\${c}`);

function principalPattern(kind: PrincipalKind, name: string): RegExp {
  return new RegExp(`\\b${kind}\\(${escapeRegExp(escapeName(name))}\\)`, 'gi');
}

/** The protections' fields that name users and groups (user matches and review requirements). */
function protectionTexts(setting: ProjectSetting): string[] {
  return [...setting.branchProtections, ...setting.tagProtections].flatMap((p) =>
    [p.userMatch, p.reviewRequirement].filter((t): t is string => typeof t === 'string'),
  );
}

function settingsNaming(db: Db, kind: PrincipalKind) {
  return db
    .selectFrom('projects')
    .select(['id', 'path', 'setting', 'serviceDeskName'])
    .where('setting', 'is not', null)
    .where((eb) => eb(eb.fn('lower', ['setting']), 'like', `%${kind}(%`))
    .orderBy('path');
}

/**
 * Paths of projects whose branch or tag protections name `user(<name>)` or `group(<name>)` (in
 * a user match or a review requirement): such a user or group cannot be deleted.
 */
export async function projectsReferencing(db: Db, kind: PrincipalKind, name: string): Promise<string[]> {
  const pattern = principalPattern(kind, name);
  const rows = await settingsNaming(db, kind).execute();
  return rows.filter((row) => protectionTexts(settingOf(row)).some((t) => t.search(pattern) >= 0)).map((r) => r.path);
}

/**
 * Rewrites `user(<oldName>)` or `group(<oldName>)` to the new name in every project's branch and
 * tag protections (user matches and review requirements), inside the caller's transaction, so a
 * rename keeps its protections (docs/compatibility.md#users-endpoints and docs/compatibility.md#groups-and-memberships "A rename is propagated").
 */
export async function renameReferences(db: Db, kind: PrincipalKind, oldName: string, newName: string): Promise<void> {
  const pattern = principalPattern(kind, oldName);
  const replacement = `${kind}(${escapeName(newName)})`;
  const rewrite = <T>(text: T): T => (typeof text === 'string' ? (text.replace(pattern, () => replacement) as T) : text);
  for (const row of await settingsNaming(db, kind).execute()) {
    const setting = settingOf(row);
    const branchProtections = setting.branchProtections.map((p) => ({
      ...p,
      userMatch: rewrite(p.userMatch),
      reviewRequirement: rewrite(p.reviewRequirement),
    }));
    const tagProtections = setting.tagProtections.map((p) => ({ ...p, userMatch: rewrite(p.userMatch) }));
    if (JSON.stringify([branchProtections, tagProtections]) === JSON.stringify([setting.branchProtections, setting.tagProtections])) continue;
    await saveSetting(db, row.id, { ...setting, branchProtections, tagProtections });
  }
}
