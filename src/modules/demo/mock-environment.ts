import type { FastifyRequest } from 'fastify';

/** Whether the request asks for the mock environment (and it is switched on). */
export function isMockRequest(request: FastifyRequest, mockEnabled: boolean): boolean {
  const value = request.headers['environment'];
  const first = Array.isArray(value) ? value[0] : value;
  return mockEnabled && first?.trim().toLowerCase() === 'mock';
}
