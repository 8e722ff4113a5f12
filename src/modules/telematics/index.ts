export type { TelematicsTables } from './telematics-repository.ts';
export { createTelematicsService, type TelematicsService } from './telematics-service.ts';
export { telematicsRoutes } from './telematics-routes.ts';
export { listPositionPartitions, type PartitionMaintenance } from './position-partitions.ts';
export { createMqttPositionConsumer, type MqttPositionConsumer } from './telematics-mqtt.ts';
export { erasePositionsAndDevices } from './position-erasure.ts';
