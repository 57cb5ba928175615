/**
 * Git talking to remote repositories over HTTP(S) for repository mirrors
 * (docs/compatibility.md#repository-mirrors, docs/security.md#outbound-connections): listing a
 * remote's branches and tags, fetching them into a staging namespace, pushing branches and tags
 * mirror-style. Every call runs git with the environment of a {@link RemoteConnection}:
 *
 * - git's configuration through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, never
 *   on the command line, so credentials never appear in process arguments (`ps`) nor in the
 *   arguments a {@link GitError} carries: the `Authorization` header as `http.extraHeader`;
 * - the host pinned to the addresses the caller checked (`http.curloptResolve`), so git connects
 *   to exactly those, whatever DNS answers a second time;
 * - no redirects (`http.followRedirects=false`): a redirect could lead anywhere;
 * - no credential helper, no prompt, and only the `http` and `https` transports
 *   (`GIT_ALLOW_PROTOCOL`): no `file://`, `ext::` or ssh;
 * - a stalled connection given up after two minutes below 1 byte/s (`http.lowSpeedLimit`);
 * - each command killed after {@link REMOTE_TIMEOUT_MS}, or when the caller's `signal` aborts.
 */
import { gitDir, gitText, runGit, value } from './command.js';
import { updateRefs } from './refs.js';

/** How git reaches one remote. */
export interface RemoteConnection {
  /** The remote's http(s) URL, without credentials. */
  url: string;
  /** Value of the `Authorization` header sent with every request, or null. */
  authorization: string | null;
  /** The addresses the URL's host name is pinned to (`host:port:addr,…` for curl), or null to let git resolve it. */
  pinned: { host: string; port: number; addresses: readonly string[] } | null;
}

/** Time a mirror's git command may take, ms (a large first fetch). */
export const REMOTE_TIMEOUT_MS = 30 * 60_000;

/** The environment of git commands reaching `connection` (see the module's description). */
function connectionEnv(connection: RemoteConnection): Record<string, string> {
  const config: [string, string][] = [
    ['http.followRedirects', 'false'],
    ['credential.helper', ''],
    ['http.lowSpeedLimit', '1'],
    ['http.lowSpeedTime', '120'],
  ];
  if (connection.authorization !== null) config.push(['http.extraHeader', `Authorization: ${connection.authorization}`]);
  if (connection.pinned !== null) {
    const { host, port, addresses } = connection.pinned;
    const list = addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
    config.push(['http.curloptResolve', `${host}:${port}:${list}`]);
  }
  const env: Record<string, string> = { GIT_ALLOW_PROTOCOL: 'http:https', GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([key, val], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = val;
  });
  return env;
}

/** A remote's branches and tags, and the branch its HEAD names. */
export interface RemoteRefs {
  /** Full ref name (`refs/heads/…`, `refs/tags/…`) → object id (a tag's own id, not the commit it peels to). */
  refs: Map<string, string>;
  /** The full ref name HEAD points to (`refs/heads/main`), or null when the remote does not say. */
  head: string | null;
}

/**
 * Lists a remote's branches and tags and its HEAD (`git ls-remote --symref <url> HEAD
 * refs/heads/* refs/tags/*`); peeled tag lines and any other namespace are left out.
 *
 * @throws GitError when git cannot reach or read the remote (stderr says why).
 */
export async function listRemoteRefs(connection: RemoteConnection, signal?: AbortSignal): Promise<RemoteRefs> {
  const out = await gitText(['ls-remote', '--symref', '--end-of-options', value(connection.url), 'HEAD', 'refs/heads/*', 'refs/tags/*'], {
    env: connectionEnv(connection),
    timeoutMs: REMOTE_TIMEOUT_MS,
    signal,
  });
  const refs = new Map<string, string>();
  let head: string | null = null;
  for (const line of out.split('\n')) {
    const [left, name] = line.split('\t');
    if (!name) continue;
    if (left.startsWith('ref: ') && name === 'HEAD') head = left.slice('ref: '.length);
    else if (/^[0-9a-f]{40,64}$/.test(left) && /^refs\/(heads|tags)\//.test(name) && !name.endsWith('^{}')) refs.set(name, left);
  }
  return { refs, head: head?.startsWith('refs/heads/') ? head : null };
}

/**
 * Fetches a remote's branches and tags into `staging` of a bare repository
 * (`+refs/heads/*:<staging>heads/*`, `+refs/tags/*:<staging>tags/*`, no tag following, no
 * FETCH_HEAD), so that the caller moves the real refs itself.
 *
 * @param staging a ref prefix ending in `/`, e.g. `refs/mirror-staging/3/`.
 * @throws GitError when git cannot reach the remote or the transfer fails.
 */
export async function fetchRemoteRefs(repo: string, connection: RemoteConnection, staging: string, signal?: AbortSignal): Promise<void> {
  await runGit(
    [
      gitDir(repo),
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--end-of-options',
      value(connection.url),
      value(`+refs/heads/*:${staging}heads/*`),
      value(`+refs/tags/*:${staging}tags/*`),
    ],
    { env: connectionEnv(connection), timeoutMs: REMOTE_TIMEOUT_MS, signal },
  );
}

/**
 * Deletes every ref under `prefix` of a bare repository (a staging namespace), in one transaction.
 *
 * @throws GitError when git fails.
 */
export async function deleteRefsUnder(repo: string, prefix: string): Promise<void> {
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(refname)', value(prefix)]);
  const refs = out.split('\n').filter((r) => r.startsWith(prefix));
  await updateRefs(
    repo,
    refs.map((ref) => ({ ref, newHash: null })),
  );
}

/** Outcome of {@link pushMirror}: the refs the remote refused, each with its reason, and git's stderr. */
export interface PushOutcome {
  ok: boolean;
  /** `refs/heads/x: <reason>` per refused ref. */
  rejected: string[];
  stderr: string;
}

/**
 * Pushes every branch and tag of a bare repository to a remote the way a mirror is pushed
 * (`git push --porcelain --prune +refs/heads/*:refs/heads/* +refs/tags/*:refs/tags/*`): forced,
 * and refs the repository does not have are deleted on the remote. Other namespaces are left alone.
 *
 * @returns whether every ref landed, with the refused ones (from `--porcelain`'s `!` lines).
 * @throws GitError when git fails otherwise (the remote unreachable, authentication refused).
 */
export async function pushMirror(repo: string, connection: RemoteConnection, signal?: AbortSignal): Promise<PushOutcome> {
  const res = await runGit(
    [
      gitDir(repo),
      'push',
      '--porcelain',
      '--prune',
      '--no-recurse-submodules',
      '--end-of-options',
      value(connection.url),
      '+refs/heads/*:refs/heads/*',
      '+refs/tags/*:refs/tags/*',
    ],
    { env: connectionEnv(connection), timeoutMs: REMOTE_TIMEOUT_MS, okExitCodes: [0, 1], signal },
  );
  const rejected: string[] = [];
  for (const line of res.stdout.toString('utf8').split('\n')) {
    const [flag, refs, summary] = line.split('\t');
    if (flag === '!' && refs) rejected.push(`${refs.split(':').pop()}: ${summary ?? 'rejected'}`);
  }
  return { ok: res.exitCode === 0 && rejected.length === 0, rejected, stderr: res.stderr };
}
