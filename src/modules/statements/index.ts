export type { StatementTables } from './statement-repository.ts';
export {
  createStatementService,
  type StatementService,
  type StatementView,
  FINAL_STATEMENT_QUEUE,
  BILLING_RUN_QUEUE,
} from './statement-service.ts';
export { statementRoutes } from './statement-routes.ts';
export { StatementSchema, type Statement } from './statement-schemas.ts';
