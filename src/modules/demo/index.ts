export { installMockPages, MOCKED_ROUTES } from './mock-pages.ts';
export { isMockRequest } from './mock-environment.ts';
export { mockLoginAnswer, mockLoginBody } from './mock-login.ts';
export { mockPolicyDetails, mockUser } from './mock-data.ts';
