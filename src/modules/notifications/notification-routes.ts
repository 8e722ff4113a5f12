import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Executor } from '../../schema.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { readOutbox } from './notification-service.ts';

const OutboxEmailSchema = Type.Object({
  id: Type.String(),
  to: Type.String(),
  template: Type.String(),
  environment: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('sent'),
    Type.Literal('logged'),
    Type.Literal('failed'),
  ]),
  subject: Type.Union([Type.String(), Type.Null()]),
  text: Type.Union([Type.String(), Type.Null()], {
    description: 'The text part; null once the email was sent by SMTP (its body is not kept).',
  }),
  created_at: Type.Integer({ description: 'UNIX seconds.' }),
  sent_at: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
});

/** Admin route: the email outbox, newest first. */
export function notificationRoutes(deps: {
  db: Executor;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/emails',
      {
        onRequest: deps.adminAuth,
        schema: {
          operationId: 'emails.list',
          tags: ['admin'],
          summary: 'Read the email outbox',
          description:
            'The newest emails first. With no `SMTP_URL` emails are not sent but kept here whole (status `logged`), so a temporary password or reset code can be read without a mail server; an email sent by SMTP keeps only its subject. `npm run cli -- emails --to ADDRESS` shows the same.',
          security: [{ adminKey: [] }],
          querystring: Type.Object(
            {
              to: Type.Optional(
                Type.String({ minLength: 1, maxLength: 320, description: 'Recipient (case-insensitive).' }),
              ),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ emails: Type.Array(OutboxEmailSchema) }),
            ...problemResponses(401, 422),
          },
        },
      },
      async (request) => {
        const emails = await readOutbox(deps.db, {
          recipient: request.query.to,
          limit: request.query.limit ?? 20,
        });
        return {
          emails: emails.map((email) => ({
            id: email.id,
            to: email.recipient,
            template: email.template,
            environment: email.environment,
            status: email.status,
            subject: email.subject,
            text: email.text,
            created_at: Math.floor(email.createdAt.getTime() / 1000),
            sent_at: email.sentAt === null ? null : Math.floor(email.sentAt.getTime() / 1000),
            last_error: email.lastError,
          })),
        };
      },
    );
  };
}
