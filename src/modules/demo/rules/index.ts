/** The demo module's pure rules: where the demo policyholder drives, and the demo product. */
export {
  HOME,
  milesToMetres,
  MOCK_DEVICE_ID,
  MOCK_RULES,
  MOCK_USAGE_RATE,
  mockUuid,
  tripsOn,
  weekdayOf,
  type DemoTrip,
  type Leg,
  type Place,
} from './demo-driving.ts';
