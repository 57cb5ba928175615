// The limit of the clone rows of `npm run bench -- load` (bench/load.ts): `git http-backend` as a
// CGI program behind a minimal node:http server, streamed both ways — git's own smart HTTP with
// no authentication and no queue, at nice 10 as Gitloom runs upload-pack. Serves the bare repositories under
// `BACKEND_ROOT` (`/<name>.git/info/refs`, `/<name>.git/git-upload-pack`, …) on
// 127.0.0.1:`BACKEND_PORT` and prints `ready` once listening. Plain JavaScript run by node, so
// its memory is the bridge's alone.
import { spawn } from 'node:child_process';
import http from 'node:http';

const root = process.env.BACKEND_ROOT;
const port = Number(process.env.BACKEND_PORT);

http
  .createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://bridge');
    const cgi = spawn('nice', ['-n', '10', 'git', 'http-backend'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] !== undefined && { CONTENT_LENGTH: req.headers['content-length'] }),
        ...(req.headers['git-protocol'] !== undefined && { GIT_PROTOCOL: String(req.headers['git-protocol']) }),
        ...(req.headers['content-encoding'] !== undefined && { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) }),
        REMOTE_ADDR: req.socket.remoteAddress ?? '',
      },
    });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => {});
    res.on('close', () => {
      if (!res.writableFinished) cgi.kill();
    });
    // the CGI header block, then the body streamed as git writes it
    let head = Buffer.alloc(0);
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      cgi.stdout.off('data', onData);
      let status = 200;
      const fields = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else fields[name] = value;
      }
      res.writeHead(status, fields);
      res.write(head.subarray(end + 4));
      cgi.stdout.pipe(res);
    };
    cgi.stdout.on('data', onData);
    cgi.on('error', () => res.destroy());
    cgi.on('close', (code) => {
      if (!res.headersSent) res.writeHead(code === 0 ? 200 : 500).end();
    });
  })
  .listen(port, '127.0.0.1', () => console.log('ready'));
