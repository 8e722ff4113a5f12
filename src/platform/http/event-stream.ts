import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A long admin operation (a billing run, an impact test) as server-sent events: the stream opens with
 * the first progress report, so whatever the operation refuses before it starts (a future date, an
 * unknown rate book) is still an ordinary problem answer; then `progress` after each step, and `done`
 * with the result, or `error` with `failureDetail` when it fails after the stream has opened.
 */
export async function streamWithProgress<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  run: (onProgress: (progress: object) => void) => Promise<T>,
  failureDetail: string,
): Promise<T | undefined> {
  let stream: FastifyReply['raw'] | undefined;
  const send = (event: string, data: unknown) => {
    stream?.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    const result = await run((progress) => {
      if (stream === undefined) {
        void reply.hijack();
        stream = reply.raw;
        stream.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-request-id': request.id,
        });
      }
      send('progress', progress);
    });
    if (stream === undefined) return result;
    send('done', result);
    stream.end();
  } catch (error) {
    if (stream === undefined) throw error;
    request.log.error({ err: error }, `${request.routeOptions.url ?? 'operation'} failed while streaming`);
    send('error', { code: 'INTERNAL', detail: failureDetail });
    stream.end();
  }
  return undefined;
}

/** Whether the client asked for server-sent events. */
export const wantsEventStream = (request: FastifyRequest): boolean =>
  (request.headers.accept ?? '').includes('text/event-stream');
