export type { TelematicsTables } from './telematics-repository.ts';
export { createTelematicsService, type TelematicsService } from './telematics-service.ts';
export { telematicsRoutes } from './telematics-routes.ts';
export { listPositionPartitions, type PartitionMaintenance } from './position-partitions.ts';
export { createMqttPositionConsumer, type MqttPositionConsumer } from './telematics-mqtt.ts';
export { erasePositionsAndDevices } from './position-erasure.ts';
export {
  deleteCrashes,
  deleteCrashesById,
  findCrash,
  listCrashesOfPolicies,
  type CrashRecord,
} from './crash-repository.ts';
export { crashTrace } from './crash-service.ts';
export { CrashEventSchema, type CrashEventInput, type CrashEventResult } from './crash-schemas.ts';
export { minimisationRoutes } from './minimisation-routes.ts';
export { eraseMinimisedSpans } from './position-minimisation.ts';
