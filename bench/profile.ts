/**
 * CPU profile of the server under load: `npx tsx bench/profile.ts [seconds] [path] [log level]`
 * (defaults: 5, `/~api/projects/{id}`, info — the level `npm start` runs at). Starts
 * `node --cpu-prof dist/cli.js serve` with the node flags of `npm start`, creates a project,
 * loads GET `path` (`{id}` is the project's id) with the admin's Bearer token at 50 connections,
 * stops the server and prints the server's CPU time per request and where it went (self time by
 * function and by package). The profile stays in the printed directory for DevTools.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build, cpuMs, load, report, startBenchServer, startScript } from './lib.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time (ms) per key, largest first. */
function selfTimes(profile: Profile, keyOf: (node: ProfileNode) => string): [string, number][] {
  const byNode = new Map<number, number>();
  profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const byKey = new Map<string, number>();
  for (const node of profile.nodes) byKey.set(keyOf(node), (byKey.get(keyOf(node)) ?? 0) + (byNode.get(node.id) ?? 0));
  return [...byKey].sort((a, b) => b[1] - a[1]);
}

const short = (url: string) => url.replace(/.*node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, 'dist/');
const seconds = Number(process.argv[2] ?? 5);
const route = process.argv[3] ?? '/~api/projects/{id}';
const level = process.argv[4] ?? 'info';
await build();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-profile-'));
const server = await startBenchServer(6731, { GITLOOM_LOG_LEVEL: level, ...startScript.env }, [
  ...startScript.flags,
  '--cpu-prof',
  '--cpu-prof-interval=100',
  `--cpu-prof-dir=${dir}`,
]);
try {
  const auth = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  const projectId = (await (await fetch(`${server.url}/~api/projects`, { method: 'POST', headers: auth, body: '{"name":"bench"}' })).json()) as number;
  const before = await cpuMs(server.process.pid!);
  const url = `${server.url}${route.replace('{id}', String(projectId))}`;
  await load(url, auth, 50, 1);
  const get = await load(url, auth, 50, seconds);
  const used = (await cpuMs(server.process.pid!)) - before;
  report('server CPU per request', `${((used * 1000) / (get.requestsPerSecond * seconds)).toFixed(0)} µs`, '');
  report(`GET ${route}: requests/s`, get.requestsPerSecond.toFixed(0), '');
  report(`GET ${route}: p50 / p99`, `${get.p50} / ${get.p99} ms`, '');
} finally {
  await server.stop({ keepDataDir: false });
}
const [file] = await fs.readdir(dir);
const profile = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as Profile;
console.log(`\nprofile: ${path.join(dir, file)}\n\nself time by function (ms):`);
for (const [key, ms] of selfTimes(profile, (n) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`).slice(
  0,
  40,
)) {
  console.log(ms.toFixed(0).padStart(8), key);
}
console.log('\nself time by package (ms):');
for (const [key, ms] of selfTimes(
  profile,
  (n) =>
    /node_modules\/((@[^/]+\/)?[^/]+)/.exec(n.callFrame.url)?.[1] ??
    (n.callFrame.url.includes('/dist/') ? 'gitloom' : n.callFrame.url || n.callFrame.functionName),
).slice(0, 25)) {
  console.log(ms.toFixed(0).padStart(8), key);
}
