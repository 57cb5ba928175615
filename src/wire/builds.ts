import { Type } from '@sinclair/typebox';
import type { BuildRow } from '../db/schema.js';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/** Build JSON (docs/compatibility.md#builds-json), fields in declaration order, nulls included. */
export const BuildSchema = Type.Object(
  {
    id: Type.Integer(),
    numberScopeId: Type.Integer(),
    projectId: Type.Integer(),
    agentId: Nullable(Type.Integer()),
    submitterId: Type.Integer(),
    cancellerId: Nullable(Type.Integer()),
    jobName: Type.String(),
    jobWorkspace: Nullable(Type.String()),
    refName: Type.String(),
    version: Nullable(Type.String()),
    description: Nullable(Type.String()),
    uuid: Type.String(),
    number: Type.Integer(),
    commitHash: Type.String(),
    status: Type.String(),
    paused: Type.Boolean(),
    submitDate: WireDate,
    pendingDate: Nullable(WireDate),
    runningDate: Nullable(WireDate),
    finishDate: Nullable(WireDate),
    retryDate: Nullable(WireDate),
    pipeline: Type.String(),
    submitReason: Type.String(),
    requestId: Nullable(Type.Integer()),
    issueId: Nullable(Type.Integer()),
  },
  { $id: 'Build' },
);

/** Maps a build row to its wire shape. */
export function toWireBuild(row: BuildRow) {
  return {
    id: row.id,
    numberScopeId: row.numberScopeId,
    projectId: row.projectId,
    agentId: row.agentId,
    submitterId: row.submitterId,
    cancellerId: row.cancellerId,
    jobName: row.jobName,
    jobWorkspace: row.jobWorkspace,
    refName: row.refName,
    version: row.version,
    description: row.description,
    uuid: row.uuid,
    number: row.number,
    commitHash: row.commitHash,
    status: row.status,
    paused: row.paused === 1,
    submitDate: toWireDate(row.submitDate),
    pendingDate: toWireDate(row.pendingDate),
    runningDate: toWireDate(row.runningDate),
    finishDate: toWireDate(row.finishDate),
    retryDate: toWireDate(row.retryDate),
    pipeline: row.pipeline,
    submitReason: row.submitReason,
    requestId: row.requestId,
    issueId: row.issueId,
  };
}

/** BuildParam JSON `{id, buildId, name, type, value}`. */
export const BuildParamSchema = Type.Object(
  {
    id: Type.Integer(),
    buildId: Type.Integer(),
    name: Type.String(),
    type: Type.String(),
    value: Nullable(Type.String()),
  },
  { $id: 'BuildParam' },
);

/** The mask shown instead of a secret param value (docs/compatibility.md#builds-endpoints getParams). */
export const SECRET_PARAM_MASK = '*****';

/** Maps a param row; values of `Secret` params are masked. */
export function toWireBuildParam(row: { id: number; buildId: number; name: string; type: string; value: string | null }) {
  return {
    id: row.id,
    buildId: row.buildId,
    name: row.name,
    type: row.type,
    value: row.type === 'Secret' && row.value !== null ? SECRET_PARAM_MASK : row.value,
  };
}

/** BuildDependence JSON. */
export const BuildDependenceSchema = Type.Object(
  {
    id: Type.Integer(),
    dependentId: Type.Integer(),
    dependencyId: Type.Integer(),
    requireSuccessful: Type.Boolean(),
    artifacts: Nullable(Type.String()),
    destinationPath: Nullable(Type.String()),
  },
  { $id: 'BuildDependence' },
);

/** Maps a dependence row. */
export function toWireBuildDependence(row: {
  id: number;
  dependentId: number;
  dependencyId: number;
  requireSuccessful: number;
  artifacts: string | null;
  destinationPath: string | null;
}) {
  return {
    id: row.id,
    dependentId: row.dependentId,
    dependencyId: row.dependencyId,
    requireSuccessful: row.requireSuccessful === 1,
    artifacts: row.artifacts,
    destinationPath: row.destinationPath,
  };
}

/** BuildLabel JSON `{id, buildId, specId}`. */
export const BuildLabelSchema = Type.Object({ id: Type.Integer(), buildId: Type.Integer(), specId: Type.Integer() }, { $id: 'BuildLabel' });

/** Maps a label row. */
export function toWireBuildLabel(row: { id: number; buildId: number; specId: number }) {
  return { id: row.id, buildId: row.buildId, specId: row.specId };
}

/** ArtifactInfo JSON (docs/compatibility.md#builds-artifacts): `@type` first. */
export const ArtifactInfoSchema = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });
