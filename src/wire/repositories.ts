/**
 * Wire shapes of the repository API (OneDev 8.6 RepositoryResource, docs/compatibility.md#gitloom-differs-additions-to-the-interface): refs,
 * commits, directory entries, file contents and file edits.
 */
import { Type } from '@sinclair/typebox';
import { BadRequest } from '../errors.js';
import type { Commit, GitIdentity } from '../git/repository.js';
import { toWireDate } from './dates.js';
import { WireDate } from './schema.js';

/** RefResponse: `{refName, commitHash}`. */
export const RefSchema = Type.Object({ refName: Type.String(), commitHash: Type.String() });

/** A person of a commit: `{name, emailAddress, when}`. */
export const PersonSchema = Type.Object({ name: Type.String(), emailAddress: Type.String(), when: WireDate });

/** CommitResponse: `{commitHash, author, committer, commitMessage}`. */
export const CommitSchema = Type.Object({
  commitHash: Type.String(),
  author: PersonSchema,
  committer: PersonSchema,
  commitMessage: Type.String(),
});

/** One directory entry: `{path, isFile}`. */
export const DirectoryEntrySchema = Type.Object({ path: Type.String(), isFile: Type.Boolean() });

/** A file's content: `{path, sha, base64Content, size, isPartial}`. */
export const FileContentSchema = Type.Object({
  path: Type.String(),
  sha: Type.String(),
  base64Content: Type.String(),
  size: Type.Integer(),
  isPartial: Type.Boolean(),
});

/** The answer of a file edit: `{commitHash}`. */
export const FileEditResultSchema = Type.Object({ commitHash: Type.String() });

function toWirePerson(person: GitIdentity) {
  return { name: person.name, emailAddress: person.email, when: toWireDate(person.date.getTime()) };
}

/** Maps a commit to CommitResponse; the message as stored. */
export function toWireCommit(commit: Commit) {
  return { commitHash: commit.hash, author: toWirePerson(commit.author), committer: toWirePerson(commit.committer), commitMessage: commit.message };
}

/** Maps a read file to its wire shape, the content base64-encoded. */
export function toWireFileContent(file: { path: string; sha: string; content: Buffer; size: number; isPartial: boolean }) {
  return { path: file.path, sha: file.sha, base64Content: file.content.toString('base64'), size: file.size, isPartial: file.isPartial };
}

/** FileCreateOrUpdateRequest: a file's new content, base64-encoded. */
export const FileCreateOrUpdateSchema = Type.Object(
  {
    '@type': Type.Literal('FileCreateOrUpdateRequest'),
    commitMessage: Type.String(),
    base64Content: Type.String(),
  },
  { additionalProperties: false },
);

/** FileDeleteRequest. */
export const FileDeleteSchema = Type.Object({ '@type': Type.Literal('FileDeleteRequest'), commitMessage: Type.String() }, { additionalProperties: false });

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Reads a file edit body into the domain's request.
 *
 * @throws BadRequest `Invalid base64 content` when `base64Content` is not base64.
 */
export function fromWireFileEdit(
  body: { '@type': 'FileCreateOrUpdateRequest'; commitMessage: string; base64Content: string } | { '@type': 'FileDeleteRequest'; commitMessage: string },
): { kind: 'createOrUpdate'; commitMessage: string; content: Buffer } | { kind: 'delete'; commitMessage: string } {
  if (body['@type'] === 'FileDeleteRequest') return { kind: 'delete', commitMessage: body.commitMessage };
  const text = body.base64Content.replace(/\s+/g, '');
  if (!BASE64.test(text)) throw new BadRequest('Invalid base64 content');
  return { kind: 'createOrUpdate', commitMessage: body.commitMessage, content: Buffer.from(text, 'base64') };
}
