import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** What Node's HTTP parser rejects, as the JSON errors every other answer uses (docs/api.md, errors). */
function parserError(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'Request header fields too large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'Request timeout' };
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { status: 413, message: 'Request body is too large' };
  return { status: 400, message: 'Bad request' };
}

/** Sockets already answered: the parser reports again for every later chunk they send. */
const answered = new WeakSet<Duplex>();

/** How long a rejected client gets to read its answer before the socket is destroyed. */
const lingerMs = 2_000;

/**
 * Answers a request Node's parser refused (oversized headers or URL, a bad request line,
 * an unknown method) with a JSON `{"message"}` and closes the connection. A response to an
 * earlier (pipelined) request still being written goes first; ours follows once it is
 * complete, since bytes in the middle of it would corrupt it. A socket already gone is
 * just destroyed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight && !inFlight.writableEnded) {
    inFlight.once('finish', () => answer(err, socket));
    inFlight.once('close', () => inFlight.writableFinished || socket.destroy());
    return;
  }
  answer(err, socket);
}

function answer(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  const { status, message } = parserError(err.code);
  const body = JSON.stringify({ message });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  // end() rather than destroy(): the client's unread bytes keep being read (and ignored), so
  // closing does not reset the connection before the client has read the answer.
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * The server's own bounds on a client (docs/service.md). Node's defaults would let a client
 * that sends its headers a byte at a time hold a socket for a minute and more, since the
 * timeouts are only checked every 30 s.
 * - `headersTimeout`: the whole request head must arrive within 10 s (408, then closed);
 * - `requestTimeout`: the whole request, body included, within 30 s (hook bodies are at most 16 KiB);
 * - `keepAliveTimeout`: an idle keep-alive connection is closed after 5 s (Node's default, set
 *   explicitly; behind a load balancer with a longer idle timeout, raise it above that one);
 * - `connectionsCheckingInterval`: how often the two timeouts are checked.
 */
export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  checkIntervalMs: number;
}

export const serverLimits: ServerLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, checkIntervalMs: 1_000 };

/** The HTTP server the app runs in, the same in main.ts and in tests. Does not listen. */
export function createHttpServer(app: RequestListener, limits: ServerLimits = serverLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    app,
  );
  server.on('clientError', answerClientError);
  return server;
}
