/**
 * Tags of bare repositories: listing with the commits they point to, and annotated tag
 * objects made with `git mktag` (no ref is moved here; see refs.ts for compare-and-swap).
 */
import { BadRequest } from '../errors.js';
import { gitDir, gitText, value } from './command.js';
import { cleanIdent, gitTimeZone, type CommitIdentityInput } from './commits.js';
import { assertObjectId, isValidRefName } from './names.js';

/** A tag and what it points to. */
export interface Tag {
  /** Short name (without `refs/tags/`). */
  name: string;
  /** The object the ref points to: the tag object of an annotated tag, else the commit. */
  objectHash: string;
  /** The commit the tag finally points to (peeled); null when it names no commit (a tagged tree or blob). */
  commitHash: string | null;
}

/**
 * All tags, sorted by name (`for-each-ref refs/tags/` with `%(*objectname)` for peeling).
 *
 * @param repo absolute path of a bare repository.
 * @throws GitError when git fails.
 */
export async function listTags(repo: string): Promise<Tag[]> {
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(objectname) %(objecttype) %(*objectname) %(*objecttype) %(refname)', 'refs/tags/']);
  return out
    .split('\n')
    .filter((l) => l.length > 0)
    .map((line) => {
      const [objectHash, type, peeled, peeledType, ...ref] = line.split(' ');
      // for-each-ref peels one level; a tag of a tag of a commit is rare enough to report without its commit
      const commitHash = type === 'commit' ? objectHash : peeledType === 'commit' ? peeled : null;
      return { name: ref.join(' ').slice('refs/tags/'.length), objectHash, commitHash };
    });
}

/**
 * Checks a user-supplied short tag name so it can become `refs/tags/<name>`.
 *
 * @returns the name.
 * @throws BadRequest `Invalid tag name: X`.
 */
export function assertValidTagName(name: string): string {
  if (name.startsWith('-') || !isValidRefName(`refs/tags/${name}`)) throw new BadRequest(`Invalid tag name: ${name}`);
  return name;
}

/** Input of {@link createTagObject}. */
export interface TagObjectInput {
  /** Short tag name. */
  name: string;
  /** 40-hex commit the tag points to. */
  commit: string;
  /** The tag message (a final newline is added when missing). */
  message: string;
  /** Who tags; the date defaults to now. */
  tagger: CommitIdentityInput;
}

function identityLine(who: CommitIdentityInput): string {
  const name = cleanIdent(who.name);
  if (!name) throw new BadRequest('Empty tagger name');
  const seconds = Math.floor((who.date ?? new Date()).getTime() / 1000);
  return `${name} <${cleanIdent(who.email)}> ${seconds} ${gitTimeZone(who.tzOffset ?? 0)}`;
}

/**
 * Creates an annotated tag object pointing at a commit (`git mktag`), without creating the ref.
 *
 * @param repo absolute path of a bare repository.
 * @param input name, commit, message and tagger.
 * @returns the 40-hex id of the tag object.
 * @throws BadRequest for an invalid name, hash or tagger; GitError when the commit is missing.
 */
export async function createTagObject(repo: string, input: TagObjectInput): Promise<string> {
  assertValidTagName(input.name);
  assertObjectId(input.commit);
  const message = input.message.endsWith('\n') ? input.message : `${input.message}\n`;
  const object = `object ${input.commit}\ntype commit\ntag ${value(input.name).text}\ntagger ${identityLine(input.tagger)}\n\n${message}`;
  return (await gitText([gitDir(repo), 'mktag'], { input: object })).trim();
}
