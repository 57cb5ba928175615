/**
 * A job's checkout on a build agent (docs/compatibility.md#build-agents): the build commit
 * fetched from the server over git's smart HTTP (`/~agent/job/git`) with the job's token, and its
 * Git LFS files from `/~agent/job/lfs/<oid>`. The token reaches git through its environment
 * (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0`: `http.extraHeader`), never its
 * command line, which `ps` shows to every user of the machine.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AGENT_PATHS } from '../wire/agent-protocol.js';
import type { CheckoutOptions } from '../ci/executor.js';
import { placeLfsObjects } from '../ci/lfs-checkout.js';
import { checkoutCommitOverHttp } from '../git/files.js';
import { pointerFilesAt, type PointerFile } from '../git/lfs-pointers.js';
import { callServer } from './server-client.js';

/** The environment giving git the job's token as an `Authorization: Bearer` header of every HTTP request. */
export function jobGitEnv(jobToken: string): Record<string, string> {
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Bearer ${jobToken}` };
}

/** What a job's checkout needs of the job. */
export interface CheckoutJob {
  readonly jobToken: string;
  readonly commitHash: string;
  readonly refName: string;
}

/**
 * The executor's checkout callback (src/ci/executor.ts `CheckoutFn`) of a job leased from
 * `server`: the commit into `target` (at the step's clone depth), then, `withLfs`, each Git LFS
 * pointer file of the commit replaced by its object, checked against the pointer's id and size.
 *
 * @throws GitError when git fails (the server refused the token, an unknown commit…); Error for
 *   an LFS object the server does not give or that does not match its pointer.
 */
export async function checkoutJob(server: string, job: CheckoutJob, target: string, options: CheckoutOptions): Promise<void> {
  const url = new URL(AGENT_PATHS.git.replace(/^\/+/, ''), server.endsWith('/') ? server : `${server}/`).href;
  await checkoutCommitOverHttp(url, target, job.commitHash, job.refName, {
    signal: options.signal,
    depth: options.cloneDepth,
    env: jobGitEnv(job.jobToken),
  });
  if (!options.withLfs) return;
  const files = await pointerFilesAt(path.join(target, '.git'), job.commitHash);
  if (files.length === 0) return;
  const bytes = await placeLfsObjects(target, files, async (file) => {
    const response = await callServer(server, `${AGENT_PATHS.lfs}/${file.oid}`, { token: job.jobToken, signal: options.signal, timeoutMs: 3_600_000 });
    if (!response.body) throw new Error(`Git LFS object ${file.oid}: the server sent no content`);
    return Readable.from(verified(response.body, file));
  });
  options.log(`Fetched ${files.length} Git LFS file${files.length === 1 ? '' : 's'} (${bytes} bytes) from the server`);
}

/** The bytes of `body`, failing at the end when their SHA-256 or length is not the pointer's. */
async function* verified(body: AsyncIterable<Uint8Array>, file: PointerFile): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of body) {
    hash.update(chunk);
    size += chunk.length;
    if (size > file.size) throw new Error(`Git LFS object ${file.oid} of '${file.path}' is larger than its pointer says (${file.size} bytes)`);
    yield chunk;
  }
  const oid = hash.digest('hex');
  if (oid !== file.oid || size !== file.size) throw new Error(`Git LFS object of '${file.path}' does not match its pointer (got ${oid}, ${size} bytes)`);
}
