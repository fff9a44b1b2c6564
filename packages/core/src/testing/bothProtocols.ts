import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';
import { createServer, type Server, type Socket } from 'node:net';

// HTTP/2's connection preface opens with `PRI * HTTP/2.0`; no HTTP/1 request line does.
const PREFACE_START = 'PRI';

/**
 * One port for HTTP/1.1 and HTTP/2 without TLS (h2c, prior knowledge): each connection goes to
 * the server of the protocol its first bytes speak. `sockets` holds the open connections, to be
 * ended on close.
 */
export function bothProtocols(http1: HttpServer, http2: Http2Server): { server: Server; sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A client gone before it said anything must not crash the server.
    socket.on('error', () => socket.destroy());
    let head = Buffer.alloc(0);
    const sniff = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length < PREFACE_START.length) return;
      socket.off('data', sniff);
      socket.pause();
      socket.unshift(head);
      // The HTTP/2 session reads what is buffered itself; the HTTP/1 parser is handed it as data.
      if (head.toString('latin1', 0, PREFACE_START.length) === PREFACE_START) http2.emit('connection', socket);
      else {
        http1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', sniff);
  });
  return { server, sockets };
}
