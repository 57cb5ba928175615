/**
 * The commands an SSH client may ask the server to run (docs/compatibility.md#git-over-ssh): what
 * git sends (`git-upload-pack '/group/app.git'`, `git-receive-pack '…'`, also written
 * `git upload-pack …`), what Git LFS sends (`git-lfs-authenticate`, `git-lfs-transfer`), and
 * anything else, refused. No shell ever sees a command: it is split here, the way a POSIX shell
 * splits git's quoting (single quotes, backslash escapes), and only its words are used.
 */
import type { GitService } from '../domain/repositories/index.js';

/** What a command asks for. */
export type SshCommand =
  /** A git service on the repository at `path` (as written: leading `/`, `.git` and all). */
  | { kind: 'git'; service: GitService; path: string }
  /** A Git LFS command (`git-lfs-authenticate`, `git-lfs-transfer`) and its arguments. */
  | { kind: 'lfs'; name: string; args: string[] }
  /** Anything else: `name` is its first word (or the whole text when it does not split), printable, at most 100 characters. */
  | { kind: 'unknown'; name: string };

/** Longest command read, in characters (a path is at most 4 KiB). */
const MAX_COMMAND = 8192;
/** A word: unquoted characters, single-quoted runs and backslash escapes, side by side. */
const WORD = /(?:[^\s'"\\]+|'[^']*'|\\.)+/y;

/**
 * Splits a command into words as a POSIX shell would for the quoting git uses (its `sq_quote`:
 * `'…'` runs with `'\''` and `'\!'` escapes), or null when it holds anything else (double quotes,
 * an unterminated quote, a trailing backslash).
 */
export function splitCommand(text: string): string[] | null {
  const words: string[] = [];
  let at = 0;
  while (at < text.length) {
    if (/\s/.test(text[at])) {
      at++;
      continue;
    }
    WORD.lastIndex = at;
    const match = WORD.exec(text);
    if (!match) return null;
    at = WORD.lastIndex;
    words.push(match[0].replace(/'([^']*)'|\\(.)/g, (_whole, quoted: string | undefined, escaped: string | undefined) => quoted ?? escaped ?? ''));
  }
  return words;
}

const GIT_SERVICES = new Set<string>(['git-upload-pack', 'git-receive-pack']);
const LFS_COMMANDS = new Set<string>(['git-lfs-authenticate', 'git-lfs-transfer']);

/** A command's name as it may be shown back: printable ASCII, at most 100 characters. */
function shown(name: string): string {
  return name.slice(0, 100).replace(/[^\x20-\x7e]/g, '?');
}

/**
 * Reads an exec request's command.
 *
 * @example parseSshCommand("git-upload-pack '/group/app.git'") // { kind: 'git', service: 'git-upload-pack', path: '/group/app.git' }
 */
export function parseSshCommand(text: string): SshCommand {
  const words = text.length > MAX_COMMAND ? null : splitCommand(text);
  if (words === null || words.length === 0) return { kind: 'unknown', name: shown(text) };
  // `git upload-pack …` is how some clients (and `git -c core.sshCommand`) spell it
  const [name, ...args] = words[0] === 'git' && words.length > 1 && GIT_SERVICES.has(`git-${words[1]}`) ? [`git-${words[1]}`, ...words.slice(2)] : words;
  if (GIT_SERVICES.has(name) && args.length === 1) return { kind: 'git', service: name as GitService, path: args[0] };
  if (LFS_COMMANDS.has(name)) return { kind: 'lfs', name, args };
  // a git service with other arguments is shown whole: its name alone would say nothing
  return { kind: 'unknown', name: shown(GIT_SERVICES.has(name) ? text : name) };
}
