import { Type, type Static } from '@sinclair/typebox';
import { LRUCache } from 'lru-cache';
import { Nullable, WireDate } from './schema.js';
import { toWireDate } from './dates.js';

export const GitPackConfigSchema = Type.Object(
  {
    windowMemory: Nullable(Type.String()),
    packSizeLimit: Nullable(Type.String()),
    threads: Nullable(Type.String()),
    window: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const CodeAnalysisSettingSchema = Type.Object({ analysisFiles: Nullable(Type.String()) }, { additionalProperties: false });

/** Project JSON (docs/compatibility.md#projects-project-json), fields in OneDev's order. */
export const ProjectSchema = Type.Object(
  {
    id: Type.Integer(),
    forkedFromId: Nullable(Type.Integer()),
    parentId: Nullable(Type.Integer()),
    name: Type.String(),
    description: Nullable(Type.String()),
    createDate: WireDate,
    defaultRoleId: Nullable(Type.Integer()),
    codeManagement: Type.Boolean(),
    issueManagement: Type.Boolean(),
    gitPackConfig: GitPackConfigSchema,
    codeAnalysisSetting: CodeAnalysisSettingSchema,
  },
  { $id: 'Project' },
);

/**
 * The settings objects of the JSON text columns, parsed once per distinct text: most projects
 * hold the same few texts (the defaults). The objects are shared between answers, so frozen
 * (both shapes are flat: strings and nulls).
 */
const parsedSettings = new LRUCache<string, object>({ max: 1000 });
function parseSettings<T extends object>(text: string): T {
  let value = parsedSettings.get(text);
  if (value === undefined) parsedSettings.set(text, (value = Object.freeze(JSON.parse(text) as object)));
  return value as T;
}

/** Maps a project row to its wire shape. */
export function toWireProject(row: {
  id: number;
  forkedFromId: number | null;
  parentId: number | null;
  name: string;
  description: string | null;
  createDate: number;
  defaultRoleId: number | null;
  codeManagement: number;
  issueManagement: number;
  gitPackConfig: string;
  codeAnalysisSetting: string;
}) {
  return {
    id: row.id,
    forkedFromId: row.forkedFromId,
    parentId: row.parentId,
    name: row.name,
    description: row.description,
    createDate: toWireDate(row.createDate),
    defaultRoleId: row.defaultRoleId,
    codeManagement: row.codeManagement === 1,
    issueManagement: row.issueManagement === 1,
    gitPackConfig: parseSettings<Static<typeof GitPackConfigSchema>>(row.gitPackConfig),
    codeAnalysisSetting: parseSettings<Static<typeof CodeAnalysisSettingSchema>>(row.codeAnalysisSetting),
  };
}

/** Clone URLs (docs/compatibility.md#projects-endpoints item 2); `ssh` is null when SSH is off. */
export const CloneUrlSchema = Type.Object({ http: Type.String(), ssh: Nullable(Type.String()) });
