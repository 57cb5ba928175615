/**
 * Build artifacts through the API (docs/compatibility.md#builds-artifacts with docs/compatibility.md#gitloom-differs-improved-behaviour): info and download
 * need AccessBuild, upload and delete need ManageJob. Paths are relative to the build's
 * `artifacts/` dir; `..` segments, absolute paths and symbolic links leading outside are refused (400).
 */
import type { Readable } from 'node:stream';
import { artifactTooLarge, type ArtifactInfo, type OpenedArtifact } from '../../ci/artifacts.js';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { requireUser } from '../actor.js';
import { loadBuild } from './builds.js';
import { artifactStorage } from './storage.js';

/** Refuses an absolute path (the part after the route's own `/` starts with another `/` or `\`). */
export function checkPath(userPath: string): string {
  if (userPath.startsWith('/') || userPath.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(userPath))
    throw new BadRequest('Invalid artifact path: must be relative');
  if (userPath.split('/').some((s) => s === '..')) throw new BadRequest('Invalid artifact path');
  return userPath;
}

/** Get Artifact Info; null (→ 204) when the path or the artifacts dir does not exist. */
export async function getArtifactInfo(ctx: Context, buildId: number, userPath: string): Promise<ArtifactInfo | null> {
  const { build } = await loadBuild(ctx, buildId);
  return artifactStorage(ctx.config, build).info(checkPath(userPath));
}

/** Download Artifact: the file (or the `Range` part of it) as a stream. */
export async function downloadArtifact(ctx: Context, buildId: number, userPath: string, rangeHeader: string | undefined): Promise<OpenedArtifact> {
  const { build } = await loadBuild(ctx, buildId);
  return artifactStorage(ctx.config, build).open(checkPath(userPath), rangeHeader);
}

/**
 * Upload Artifact: streams the body to the artifacts' store, visible once whole. One file may hold at most
 * `config.artifactMaxBytes` (`GITLOOM_ARTIFACT_MAX_MB`): a body declared larger
 * (`declaredLength`, the request's `Content-Length`) is refused before a byte is read, one that
 * grows past it is cut off as it arrives; either way nothing is kept.
 *
 * @param declaredLength the request's `Content-Length` header, if any.
 * @throws Unauthorized (anonymous), NotFound/Forbidden (build, ManageJob), BadRequest (no body,
 *   invalid path), Conflict (path is a directory), PayloadTooLarge with code
 *   `GITLOOM_ERR_ARTIFACT_TOO_LARGE` (over the limit).
 */
export async function uploadArtifact(ctx: Context, buildId: number, userPath: string, body: Readable | undefined, declaredLength?: string): Promise<void> {
  requireUser(ctx.actor);
  if (!body) throw new BadRequest('Missing artifact content: send the file as the request body');
  const { build } = await loadBuild(ctx, buildId, 'manageJob');
  const maxBytes = ctx.config.artifactMaxBytes;
  if (declaredLength !== undefined && Number(declaredLength) > maxBytes) throw artifactTooLarge(maxBytes);
  await artifactStorage(ctx.config, build).write(checkPath(userPath), body, { maxBytes });
}

/** Delete Artifact: a file, a directory (that directory only), or everything for the root. */
export async function removeArtifact(ctx: Context, buildId: number, userPath: string): Promise<void> {
  requireUser(ctx.actor);
  const { build } = await loadBuild(ctx, buildId, 'manageJob');
  await artifactStorage(ctx.config, build).remove(checkPath(userPath));
}
