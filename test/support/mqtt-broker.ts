import { spawnSync } from 'node:child_process';

/** The broker the MQTT tests talk to: Mosquitto on this machine unless MQTT_TEST_URL names another. */
export const MQTT_URL = process.env['MQTT_TEST_URL'] ?? 'mqtt://127.0.0.1:1883';

const CONNECT = `
const socket = require('node:net').connect(Number(process.argv[2]), process.argv[1]);
socket.setTimeout(1000);
socket.on('connect', () => process.exit(0));
socket.on('error', () => process.exit(1));
socket.on('timeout', () => process.exit(1));
`;

/**
 * The `skip` of the MQTT suites: false when a broker answers at MQTT_URL, else why not. CI has the
 * broker, so there a missing one is a failure, not a skip. Decided synchronously, by a child process
 * trying the port, because a test file may not await at its top level (test/support/shard.ts loads it
 * with `require`). Another scheme than mqtt: is left to the tests to say what is wrong.
 */
export function noMqttBroker(): string | false {
  if (process.env['CI'] !== undefined) return false;
  const url = new URL(MQTT_URL);
  if (url.protocol !== 'mqtt:') return false;
  const probe = spawnSync(process.execPath, ['-e', CONNECT, url.hostname, url.port || '1883'], {
    timeout: 5000,
  });
  return probe.status === 0 ? false : `no MQTT broker at ${MQTT_URL}`;
}
