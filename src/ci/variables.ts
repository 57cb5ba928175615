/**
 * `@...@` variable interpolation of build-spec values (docs/compatibility.md#builds-build-spec "Interpolation
 * inside `@...@`"). `@@` is a literal `@`; an unknown variable is an error.
 *
 * Variables:
 * - job variables: `project_name`, `project_path`, `job_name`, `ref`, `branch`, `tag`,
 *   `commit_hash`, `build_number`, `build_version`, `pull_request_number`, `issue_number`;
 * - prefixed: `param:Name`, `secret:Name` (alias `secrets:Name`), `property:Name`, `file:relpath`;
 * - recognised but unsupported by Gitloom (error): `script:…`, `attribute:…`, `pause`.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { BadRequest } from '../errors.js';
import { openInside, UnsafePathError } from './job-directory.js';

/** The job variable names of OneDev. */
export const JOB_VARIABLES = [
  'project_name',
  'project_path',
  'job_name',
  'ref',
  'branch',
  'tag',
  'commit_hash',
  'build_number',
  'build_version',
  'pull_request_number',
  'issue_number',
] as const;

/** One job variable name. */
export type JobVariableName = (typeof JOB_VARIABLES)[number];

/** A parsed `@...@` reference. */
export type VariableRef =
  { readonly kind: 'job'; readonly name: JobVariableName } | { readonly kind: 'param' | 'secret' | 'property' | 'file'; readonly name: string };

/** A user-facing interpolation error (unknown variable, unterminated `@`, missing secret…). */
export class VariableError extends BadRequest {}

/**
 * Resolves one variable to its value, or returns `undefined` when it has no value in this
 * context (which {@link interpolate} reports as an error).
 */
export type VariableResolver = (ref: VariableRef) => string | undefined;

const PREFIXES = ['param', 'secret', 'property', 'file'] as const;

/**
 * Parses the text between two `@` into a reference.
 *
 * @param inner e.g. `build_number`, `param:Flavor`.
 * @throws VariableError for an unknown or unsupported variable.
 */
export function parseVariable(inner: string): VariableRef {
  if ((JOB_VARIABLES as readonly string[]).includes(inner)) return { kind: 'job', name: inner as JobVariableName };
  const colon = inner.indexOf(':');
  if (colon > 0) {
    // `secrets:` is OneDev 8.6's alias of `secret:` (docs/compatibility.md#builds-build-spec)
    const prefix = inner.slice(0, colon) === 'secrets' ? 'secret' : inner.slice(0, colon);
    const name = inner.slice(colon + 1);
    if ((PREFIXES as readonly string[]).includes(prefix)) {
      if (name.length === 0) throw new VariableError(`Variable '@${inner}@' needs a name after '${prefix}:'`);
      return { kind: prefix as (typeof PREFIXES)[number], name };
    }
    if (prefix === 'script' || prefix === 'attribute') {
      throw new VariableError(`Variable '@${inner}@' is not supported ('${prefix}:' variables are not available)`);
    }
  }
  if (inner === 'pause') throw new VariableError(`Variable '@pause@' is not supported`);
  throw new VariableError(`Unknown variable '@${inner}@' (write '@@' for a literal '@')`);
}

/** A piece of interpolatable text: literal text or a variable reference. */
type Piece = { readonly text: string } | { readonly ref: VariableRef };

function split(text: string): Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf('@', i);
    if (at < 0) {
      literal += text.slice(i);
      break;
    }
    literal += text.slice(i, at);
    if (text[at + 1] === '@') {
      literal += '@';
      i = at + 2;
      continue;
    }
    const end = text.indexOf('@', at + 1);
    if (end < 0) {
      throw new VariableError(`Unterminated variable at '${text.slice(at, at + 30)}' (write '@@' for a literal '@')`);
    }
    if (literal) pieces.push({ text: literal });
    literal = '';
    pieces.push({ ref: parseVariable(text.slice(at + 1, end)) });
    i = end + 1;
  }
  if (literal) pieces.push({ text: literal });
  return pieces;
}

/**
 * Lists the variables referenced by `text` (in order, duplicates kept), without resolving.
 * Used to validate a spec and to collect secret references.
 *
 * @throws VariableError for an unterminated `@` or an unknown variable.
 */
export function scanVariables(text: string): VariableRef[] {
  const refs: VariableRef[] = [];
  for (const piece of split(text)) if ('ref' in piece) refs.push(piece.ref);
  return refs;
}

/** Renders a reference back to its source form, e.g. `@param:X@`. */
export function formatVariable(ref: VariableRef): string {
  return ref.kind === 'job' ? `@${ref.name}@` : `@${ref.kind}:${ref.name}@`;
}

/**
 * Replaces every `@...@` in `text` with its value; `@@` becomes `@`.
 *
 * @example interpolate('v@build_number@ @@home', r) === 'v12 @home'
 * @throws VariableError for an unterminated `@`, an unknown variable, or a variable the
 *   resolver has no value for (`undefined`).
 */
export function interpolate(text: string, resolve: VariableResolver): string {
  let out = '';
  for (const piece of split(text)) {
    if ('text' in piece) {
      out += piece.text;
    } else {
      const value = resolve(piece.ref);
      if (value === undefined) throw new VariableError(`Variable ${formatVariable(piece.ref)} has no value here`);
      out += value;
    }
  }
  return out;
}

/** Values behind the standard resolver. Absent optional job variables resolve to `''`. */
export interface VariableContext {
  readonly projectName: string;
  readonly projectPath: string;
  readonly jobName: string;
  /** Full ref, e.g. `refs/heads/main`. */
  readonly ref: string;
  readonly commitHash: string;
  readonly buildNumber: number;
  readonly buildVersion?: string | null;
  readonly pullRequestNumber?: number | null;
  readonly issueNumber?: number | null;
  /** Param values by name; multiple values are joined with `,`. */
  readonly params?: Readonly<Record<string, readonly string[]>>;
  /** Secret values by secret name. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Spec `properties` by name. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Workspace directory for `@file:relpath@`; without it `file:` variables have no value. */
  readonly workspaceDir?: string;
}

/**
 * Builds the standard resolver over a {@link VariableContext}.
 * - `branch`/`tag` derive from `ref` (`refs/heads/x` → branch `x`); `''` when not applicable.
 * - `param:X` of an undeclared param, `secret:X` of an unknown secret and `property:X` of an
 *   unknown property have no value (→ error from {@link interpolate}).
 * - `file:relpath` reads the workspace file (UTF-8, trimmed). A path that is absolute, has a `..`
 *   segment or resolves (through symlinks) outside the workspace throws VariableError; a
 *   missing file throws VariableError.
 */
export function createVariableResolver(ctx: VariableContext): VariableResolver {
  return (ref) => {
    switch (ref.kind) {
      case 'job':
        return jobVariable(ctx, ref.name);
      case 'param': {
        const values = ctx.params?.[ref.name];
        return values === undefined ? undefined : values.join(',');
      }
      case 'secret':
        return ctx.secrets?.[ref.name];
      case 'property':
        return ctx.properties?.[ref.name];
      case 'file':
        return ctx.workspaceDir === undefined ? undefined : readWorkspaceFile(ctx.workspaceDir, ref.name);
    }
  };
}

function jobVariable(ctx: VariableContext, name: JobVariableName): string {
  switch (name) {
    case 'project_name':
      return ctx.projectName;
    case 'project_path':
      return ctx.projectPath;
    case 'job_name':
      return ctx.jobName;
    case 'ref':
      return ctx.ref;
    case 'branch':
      return ctx.ref.startsWith('refs/heads/') ? ctx.ref.slice('refs/heads/'.length) : '';
    case 'tag':
      return ctx.ref.startsWith('refs/tags/') ? ctx.ref.slice('refs/tags/'.length) : '';
    case 'commit_hash':
      return ctx.commitHash;
    case 'build_number':
      return String(ctx.buildNumber);
    case 'build_version':
      return ctx.buildVersion ?? '';
    case 'pull_request_number':
      return ctx.pullRequestNumber == null ? '' : String(ctx.pullRequestNumber);
    case 'issue_number':
      return ctx.issueNumber == null ? '' : String(ctx.issueNumber);
  }
}

/** Largest file `@file:relpath@` reads, in bytes. */
export const WORKSPACE_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Reads a workspace file for `@file:relpath@` by the rules of src/ci/job-directory.ts
 * ({@link openInside}: its real path inside the workspace, `O_NOFOLLOW`, a regular file), at most
 * {@link WORKSPACE_FILE_MAX_BYTES}.
 *
 * @returns the trimmed UTF-8 content.
 * @throws VariableError when the path escapes the workspace, is not a regular file, is too large
 *   or cannot be read.
 */
export function readWorkspaceFile(workspaceDir: string, relPath: string): string {
  let fd: number;
  try {
    fd = openInside(workspaceDir, relPath, 'File path');
  } catch (e) {
    if (e instanceof UnsafePathError) throw new VariableError(`Invalid file path in @file:${relPath}@: ${e.reason}`);
    throw new VariableError(`File not found for @file:${relPath}@`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > WORKSPACE_FILE_MAX_BYTES) throw new VariableError(`File for @file:${relPath}@ is larger than ${WORKSPACE_FILE_MAX_BYTES} bytes`);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    return buffer.subarray(0, read).toString('utf8').trim();
  } finally {
    closeSync(fd);
  }
}
