#!/usr/bin/env node
// A lower floor than bench/bare-node-proxy.mjs: the same proxy written straight on node:net, no
// HTTP library on either side. It reads a request's head and Content-Length body, parses and
// re-serialises the JSON, sends it upstream on a kept connection, reads the answer's
// Content-Length body, parses it, and writes it back: what any Node gateway must do at the least,
// with nothing of node:http's request and response objects or undici's. It takes only what the
// benchmark sends (POST, Content-Length bodies, non-streamed answers); it is a yardstick, not a proxy.
//
//   taskset -c 0 node bench/bare-net-proxy.mjs --port 18991 --upstream-port 18080 --seconds 60 &
//   taskset -c 1 node ../shared/peerbench/loadgen.mjs rate --url http://127.0.0.1:18991/v1/chat/completions \
//     --body-file ../shared/peerbench/bodies/chat.json --rate 500 --duration 8
//
// Listens on 127.0.0.1 only, forwards to 127.0.0.1 only, and exits after --seconds.
import net from 'node:net';

const options = { port: '18991', 'upstream-port': '18080', seconds: '60' };
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
const CRLF_CRLF = Buffer.from('\r\n\r\n');
const idleUpstreams = [];

/** The length a head declares, or 0. */
function contentLength(head) {
  const match = /\r\ncontent-length: *(\d+)/i.exec(head);
  return match ? Number(match[1]) : 0;
}

/** One upstream exchange on a kept connection: `done(status, bodyBytes)`. */
function callUpstream(path, body, done) {
  let socket = idleUpstreams.pop();
  if (socket === undefined) {
    socket = net.connect(Number(options['upstream-port']), '127.0.0.1');
    socket.setNoDelay(true);
    socket.on('error', () => {});
  }
  let pending = null;
  const onData = (chunk) => {
    pending = pending ? Buffer.concat([pending, chunk]) : chunk;
    const headEnd = pending.indexOf(CRLF_CRLF);
    if (headEnd < 0) return;
    const head = pending.toString('latin1', 0, headEnd);
    const end = headEnd + 4 + contentLength(head);
    if (pending.length < end) return;
    socket.off('data', onData);
    idleUpstreams.push(socket);
    done(Number(head.slice(9, 12)), pending.subarray(headEnd + 4, end));
  };
  socket.on('data', onData);
  socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: Bearer bare-proxy\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => {});
  let pending = null;
  socket.on('data', (chunk) => {
    pending = pending ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      const headEnd = pending.indexOf(CRLF_CRLF);
      if (headEnd < 0) return;
      const head = pending.toString('latin1', 0, headEnd);
      const end = headEnd + 4 + contentLength(head);
      if (pending.length < end) return;
      const requestLine = head.slice(0, head.indexOf('\r\n'));
      const path = requestLine.split(' ')[1];
      const body = JSON.stringify(JSON.parse(pending.toString('utf8', headEnd + 4, end)));
      pending = pending.length > end ? pending.subarray(end) : null;
      callUpstream(path, body, (status, answer) => {
        JSON.parse(answer.toString('utf8'));
        socket.write(`HTTP/1.1 ${status} OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n`);
        socket.write(answer);
      });
      if (pending === null) return;
    }
  });
});
server.listen(Number(options.port), '127.0.0.1', () => console.error(`bare net proxy on 127.0.0.1:${options.port} → 127.0.0.1:${options['upstream-port']} for ${options.seconds} s`));
setTimeout(() => process.exit(0), Number(options.seconds) * 1000).unref();
