export type { StaffTables } from './staff-repository.ts';
export { createStaffService, type StaffService, type StaffSettings } from './staff-service.ts';
export { isStaffRole, STAFF_ACTIONS, STAFF_ROLES, staffMay, type StaffRole } from './rules/index.ts';
export { installStaffAccess, SESSION_COOKIE, CSRF_HEADER } from './staff-access.ts';
export { staffRoutes } from './staff-routes.ts';
export { findStaffRole } from './staff-repository.ts';
