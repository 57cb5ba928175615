/**
 * The archive download of a revision (OneDev 8.6's ArchiveResource,
 * `/~downloads/projects/<projectId>/archives?revision=<rev>&format=zip|tgz`;
 * docs/compatibility.md#gitloom-differs-code-browsing): the revision resolved to a commit, then
 * `git archive` of its tree streamed as git writes it, or the archive kept from an earlier
 * download of the commit (./archive-cache.ts).
 */
import contentDisposition from 'content-disposition';
import type { Readable } from 'node:stream';
import { BadRequest, NotFound } from '../../errors.js';
import { streamArchive, type ArchiveFormat } from '../../git/archive.js';
import { resolveCommit } from '../../git/refs.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { openArchive } from './archive-cache.js';

/** The formats by OneDev's `format` parameter: git's format, the file extension and the Content-Type. */
const FORMATS: Record<string, { git: ArchiveFormat; extension: string; contentType: string }> = {
  zip: { git: 'zip', extension: 'zip', contentType: 'application/zip' },
  tgz: { git: 'tar.gz', extension: 'tar.gz', contentType: 'application/gzip' },
};

/** An archive ready to stream. */
export interface Archive {
  /** 40-hex hash of the commit archived. */
  commitHash: string;
  /** `application/zip` or `application/gzip`. */
  contentType: string;
  /** `attachment; filename="<project name>-<revision>.<zip|tar.gz>"`, unsafe characters replaced by `-`. */
  contentDisposition: string;
  /**
   * The archive's bytes: the kept file, or `git archive`'s output as it comes (see
   * src/git/archive.ts), which fails instead of ending when git does; destroying the stream or
   * aborting `signal` kills git. `onKeepError` is told why an archive could not be kept (the
   * download goes on).
   */
  open(signal: AbortSignal | undefined, onKeepError: (error: Error) => void): Promise<Readable>;
}

/** The file-name part of a revision: a branch or tag without `refs/heads/` / `refs/tags/`, only `[A-Za-z0-9._+-]`, no leading dot. */
function fileNamePart(text: string): string {
  const short = text.replace(/^refs\/(?:heads|tags)\//, '');
  return short.replace(/[^A-Za-z0-9._+-]+/g, '-').replace(/^[.-]+/, '') || 'archive';
}

/**
 * The archive of `revision` of a project (read code, as the files page: a project the caller
 * cannot see is NotFound). The revision is any revision git resolves to a commit (a branch, a
 * tag, `refs/heads/x`, a hash); it reaches git only as the resolved hash. Git LFS pointer files
 * are archived as the pointers stored in git, not the objects they name.
 *
 * @param projectId the project's id.
 * @param revision the revision as given (`main`, `v1.0`, a hash).
 * @param format OneDev's `format` value: `zip` or `tgz`.
 * @throws BadRequest `revision parameter has to be specified` (blank), `Value must not start with
 *   '-'…` (a revision read as an option), `format parameter should be either zip or tgz`;
 *   NotFound `Project not found: N`, `Revision not found: X`; Forbidden/Unauthorized without read code.
 */
export async function archiveAt(ctx: Context, projectId: number, revision: string, format: string): Promise<Archive> {
  const chosen = Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined;
  if (!chosen) throw new BadRequest('format parameter should be either zip or tgz');
  if (revision.trim() === '') throw new BadRequest('revision parameter has to be specified');
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const commitHash = await resolveCommit(repo, revision);
  if (!commitHash) throw new NotFound(`Revision not found: ${revision}`);
  const fileName = `${fileNamePart(project.name)}-${fileNamePart(revision)}.${chosen.extension}`;
  return {
    commitHash,
    contentType: chosen.contentType,
    contentDisposition: contentDisposition(fileName, { type: 'attachment' }),
    open: (signal, onKeepError) =>
      openArchive(ctx.config, project.id, commitHash, chosen.git, () => streamArchive(repo, commitHash, chosen.git, signal), onKeepError),
  };
}
