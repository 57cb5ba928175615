import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstUnreachableWant, reachableWantsGate, UnreachableWant } from '../../src/git/reachable-wants.js';
import { initBareRepository, updateRef } from '../../src/git/repository.js';
import { git, tempDir, writeCommit } from './helpers.js';

const tmp = tempDir('wants');
afterAll(() => tmp.remove());

const pkt = (payload: string): string => (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;
/** A protocol v2 request: command, capabilities, delimiter, arguments, flush. */
const v2 = (command: string, args: string[]): string =>
  pkt(`command=${command}`) + pkt('agent=git/2.39.5') + pkt('object-format=sha1') + '0001' + args.map(pkt).join('') + '0000';

/** Sends `request` through the gate in chunks of `chunkSize` bytes; returns what passed or the refusal. */
async function gate(repo: string, request: string, chunkSize = request.length, session = false): Promise<{ passed: string } | { refused: string }> {
  const bytes = Buffer.from(request, 'latin1');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  const out = new PassThrough();
  let passed = '';
  out.on('data', (c: Buffer) => (passed += c.toString('latin1')));
  try {
    await pipeline(Readable.from(chunks), reachableWantsGate(repo, { session }), out);
    return { passed };
  } catch (error) {
    if (error instanceof UnreachableWant) return { refused: error.objectId };
    throw error;
  }
}

describe('reachable wants: protocol v2 fetches of unreachable commits are refused', () => {
  let repo: string;
  let root: string;
  let tip: string;
  let gone: string;
  let goneTree: string;

  beforeAll(async () => {
    repo = join(tmp.path, 'r.git');
    await initBareRepository(repo);
    root = writeCommit(repo, { files: { 'a.txt': 'a' } });
    tip = writeCommit(repo, { parents: [root], files: { 'b.txt': 'b' } });
    gone = writeCommit(repo, { parents: [tip], files: { 'secret.txt': 's' } });
    goneTree = git(repo, ['rev-parse', `${gone}^{tree}`]);
    await updateRef(repo, 'refs/heads/main', tip, null);
    git(repo, ['tag', '-a', '-m', 'old', 'old-tag', root]);
  });

  it('decides like upload-pack under allowReachableSHA1InWant: commits must be reachable, trees and blobs only exist', async () => {
    const tag = git(repo, ['rev-parse', 'refs/tags/old-tag']);
    expect(await firstUnreachableWant(repo, [tip, root, tag, goneTree])).toBeNull();
    expect(await firstUnreachableWant(repo, [tip, gone])).toBe(gone);
    expect(await firstUnreachableWant(repo, ['1'.repeat(40)])).toBe('1'.repeat(40));
    expect(await firstUnreachableWant(repo, [])).toBeNull();
  });

  it('holds the flush of a fetch until its wants are checked, whatever the chunking', async () => {
    const allowed = v2('fetch', [`want ${root}\n`, 'done\n']);
    for (const size of [1, 3, 7, allowed.length]) expect(await gate(repo, allowed, size)).toEqual({ passed: allowed });
    const refused = v2('fetch', [`want ${tip}\n`, `want ${gone}\n`, 'done\n']);
    for (const size of [1, 5, refused.length]) {
      const result = await gate(repo, refused, size);
      expect(result).toEqual({ refused: gone });
    }
  });

  it('reads a want as git does: first 40 hex digits, either case, whatever follows', async () => {
    expect(await gate(repo, v2('fetch', [`want ${gone.toUpperCase()}\n`]))).toEqual({ refused: gone });
    expect(await gate(repo, v2('fetch', [`want ${gone}trailing junk`]))).toEqual({ refused: gone });
    // a length in upper-case hex digits (`003A`: 58 bytes) is as good as `003a` to git
    const line = `want ${gone}xxxxxxxx\n`;
    expect(pkt(line).slice(0, 4)).toBe('003a');
    const upper = v2('fetch', []).replace(/0000$/, `003A${line}0000`);
    expect(await gate(repo, upper)).toEqual({ refused: gone });
  });

  it('passes other requests untouched: ls-refs, protocol v0 wants (git checks those itself), malformed input', async () => {
    const lsRefs = v2('ls-refs', ['peel\n', 'ref-prefix refs/heads/\n']);
    expect(await gate(repo, lsRefs)).toEqual({ passed: lsRefs });
    const v0 = `${pkt(`want ${gone} multi_ack_detailed side-band-64k\n`)}0000${pkt('done\n')}`;
    expect(await gate(repo, v0)).toEqual({ passed: v0 });
    const malformed = 'zzzz garbage';
    expect(await gate(repo, malformed)).toEqual({ passed: malformed });
  });

  it('checks every request of a session (git over SSH), not only the first', async () => {
    const lsRefs = v2('ls-refs', ['peel\n']);
    const rounds = v2('fetch', [`want ${tip}\n`, `have ${root}\n`]) + v2('fetch', [`want ${tip}\n`, 'done\n']);
    for (const size of [1, 9, 1000]) expect(await gate(repo, lsRefs + rounds, size, true)).toEqual({ passed: lsRefs + rounds });
    const sneaky = lsRefs + v2('fetch', [`want ${tip}\n`]) + v2('fetch', [`want ${gone}\n`, 'done\n']);
    expect(await gate(repo, sneaky, 11, true)).toEqual({ refused: gone });
    // one smart-HTTP request: what follows its first request is not read
    expect(await gate(repo, sneaky)).toEqual({ passed: sneaky });
    const v0 = `${pkt(`want ${tip} multi_ack_detailed side-band-64k\n`)}0000${pkt(`have ${root}\n`)}0000${pkt('done\n')}`;
    expect(await gate(repo, v0, 5, true)).toEqual({ passed: v0 });
  });
});
