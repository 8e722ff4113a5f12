import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

test('defaults give the embedded set-up', () => {
  const config = loadConfig({}, '/srv/milepost');
  assert.equal(config.port, 3000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.dataDir, '/srv/milepost/data');
  assert.equal(config.role, 'all');
  assert.equal(config.mockEnvironment, true);
  // Sandbox webhook endpoints at private addresses only where a local run asks for them.
  assert.equal(config.webhooksAllowPrivate, false);
  assert.ok(Object.isFrozen(config));
});

test('every bad setting is reported at once, each by name', () => {
  assert.throws(
    () =>
      loadConfig({
        PORT: 'eighty',
        ROLE: 'boss',
        LOG_LEVEL: 'loud',
        DATABASE_URL: 'mysql://x',
        ADMIN_API_KEY: 'short',
        SMTP_URL: 'not a url',
        MOCK_ENVIRONMENT: 'maybe',
        BILLING_RUN_AT: '25:00',
        STRIPE_SECRET_KEY: 'pk_live_x',
        EMAIL_FROM: 'Milepost',
        STRIPE_WEBHOOK_SECRET: 'we_1PqR8s2eZvKYlo2C',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const text = error.problems.join('\n');
      for (const name of [
        'PORT',
        'ROLE',
        'LOG_LEVEL',
        'DATABASE_URL',
        'ADMIN_API_KEY',
        'SMTP_URL',
        'MOCK_ENVIRONMENT',
        'BILLING_RUN_AT',
        'STRIPE_SECRET_KEY',
        'EMAIL_FROM',
        'STRIPE_WEBHOOK_SECRET',
      ]) {
        assert.match(text, new RegExp(`^${name} `, 'm'), `${name} is named`);
      }
      assert.equal(error.problems.length, 11);
      return true;
    },
  );
});

test('valid settings are read', () => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    ROLE: 'Worker',
    DATABASE_URL: 'postgres://root@127.0.0.1:5432/test',
    MOCK_ENVIRONMENT: 'off',
    ADMIN_API_KEY: 'k'.repeat(40),
  });
  assert.equal(config.port, 8080);
  assert.equal(config.role, 'worker');
  assert.equal(config.databaseUrl, 'postgres://root@127.0.0.1:5432/test');
  assert.equal(config.mockEnvironment, false);
});

test('a sender is an address, alone or after a name', () => {
  for (const from of ['no-reply@insurer.example', 'Acme Insurance <no-reply@insurer.example>'])
    assert.equal(loadConfig({ EMAIL_FROM: from }).emailFrom, from);
  for (const from of ['Acme Insurance', 'Acme <no-reply>', 'a@b@c', 'Acme <no-reply@insurer.example']) {
    assert.throws(
      () => loadConfig({ EMAIL_FROM: from }),
      (error: unknown) => error instanceof ConfigError && /^EMAIL_FROM /.test(error.problems[0] ?? ''),
      from,
    );
  }
});

test('behind PgBouncer: LISTEN can go elsewhere', () => {
  const defaults = loadConfig({ DATABASE_URL: 'postgres://root@127.0.0.1:6432/milepost' });
  assert.equal(defaults.databaseListenUrl, undefined, 'unset: the change feed uses DATABASE_URL');
  const pooled = loadConfig({
    DATABASE_URL: 'postgres://root@127.0.0.1:6432/milepost',
    DATABASE_LISTEN_URL: 'postgresql://root@127.0.0.1:5432/milepost',
  });
  assert.equal(pooled.databaseListenUrl, 'postgresql://root@127.0.0.1:5432/milepost');
  assert.throws(
    () => loadConfig({ DATABASE_LISTEN_URL: 'http://db' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.map((p) => p.split(' ')[0]),
        ['DATABASE_LISTEN_URL', 'DATABASE_LISTEN_URL'],
      );
      return true;
    },
  );
});

test('payment retry days are increasing whole days', () => {
  assert.deepEqual(loadConfig({}).paymentRetryDays, [1, 3, 5, 7]);
  assert.deepEqual(loadConfig({ PAYMENT_RETRY_DAYS: '2, 4' }).paymentRetryDays, [2, 4]);
  for (const bad of ['3,1', '0,2', 'a', '1,1']) {
    assert.throws(() => loadConfig({ PAYMENT_RETRY_DAYS: bad }), /PAYMENT_RETRY_DAYS/);
  }
});

test('.env.example lists every setting, each with its default', async () => {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(new URL('../.env.example', import.meta.url), 'utf8');
  const example: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match !== null) example[match[1]!] = match[2]!;
  }
  const read = new Set<string>();
  loadConfig(
    new Proxy(
      {},
      {
        get: (_target, name) => {
          if (typeof name === 'string') read.add(name);
          return undefined;
        },
      },
    ),
  );
  assert.deepEqual(Object.keys(example).sort(), [...read].sort());
  assert.deepEqual(loadConfig(example, '/srv/milepost'), loadConfig({}, '/srv/milepost'));
});

test('MQTT is off unless MQTT_URL is set; its protocol, share group and client id are checked', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.mqttUrl, undefined);
  assert.equal(defaults.mqttShareGroup, 'milepost');
  assert.match(defaults.mqttClientId, /^milepost-[A-Za-z0-9._-]+$/);
  assert.equal(loadConfig({}).mqttClientId, defaults.mqttClientId, 'the default is stable');
  for (const url of ['mqtt://127.0.0.1:1883', 'mqtts://broker:8883', 'ws://b/mqtt', 'wss://b/mqtt'])
    assert.equal(loadConfig({ MQTT_URL: url }).mqttUrl, url);
  const set = loadConfig({ MQTT_SHARE_GROUP: 'positions', MQTT_CLIENT_ID: 'worker-1.eu' });
  assert.equal(set.mqttShareGroup, 'positions');
  assert.equal(set.mqttClientId, 'worker-1.eu');
  assert.throws(
    () => loadConfig({ MQTT_URL: 'http://broker', MQTT_SHARE_GROUP: 'a/b', MQTT_CLIENT_ID: 'w+1' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.map((p) => p.split(' ')[0]),
        ['MQTT_URL', 'MQTT_SHARE_GROUP', 'MQTT_CLIENT_ID'],
      );
      return true;
    },
  );
});

test('DEFAULT_CLIENT_ID and the web app settings: unset by default, checked when set', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.defaultClientId, undefined);
  assert.deepEqual(defaults.app, {
    clientId: undefined,
    environment: 'sandbox',
    brandName: 'Milepost',
    brandColour: '#1f5f8b',
    stripePublishableKey: undefined,
    mapTileUrl: undefined,
  });
  const set = loadConfig({
    DEFAULT_CLIENT_ID: 'mp_client_AbC-12_x',
    APP_CLIENT_ID: 'mp_client_other',
    APP_ENVIRONMENT: 'Production',
    APP_BRAND_NAME: 'Acme Miles',
    APP_BRAND_COLOUR: '#A0B1C2',
    STRIPE_PUBLISHABLE_KEY: 'pk_test_123abc',
    MAP_TILE_URL: 'https://{s}.tile.example.org/{z}/{x}/{y}.png',
  });
  assert.equal(set.defaultClientId, 'mp_client_AbC-12_x');
  assert.deepEqual(set.app, {
    clientId: 'mp_client_other',
    environment: 'production',
    brandName: 'Acme Miles',
    brandColour: '#a0b1c2',
    stripePublishableKey: 'pk_test_123abc',
    mapTileUrl: 'https://{s}.tile.example.org/{z}/{x}/{y}.png',
  });
  assert.throws(
    () =>
      loadConfig({
        DEFAULT_CLIENT_ID: 'a b',
        APP_BRAND_COLOUR: 'red',
        STRIPE_PUBLISHABLE_KEY: 'sk_test_1',
        APP_ENVIRONMENT: 'mock',
        MAP_TILE_URL: 'https://tiles.example.org/tile.png',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems.map((p) => p.split(' ')[0]).sort(), [
        'APP_BRAND_COLOUR',
        'APP_ENVIRONMENT',
        'DEFAULT_CLIENT_ID',
        'MAP_TILE_URL',
        'STRIPE_PUBLISHABLE_KEY',
      ]);
      return true;
    },
  );
});

test('traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; the endpoint and service name are checked', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.otelExporterEndpoint, undefined);
  assert.equal(defaults.otelServiceName, 'milepost');
  const on = loadConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_SERVICE_NAME: 'milepost-worker',
  });
  assert.equal(on.otelExporterEndpoint, 'http://collector:4318');
  assert.equal(on.otelServiceName, 'milepost-worker');
  assert.throws(
    () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317', OTEL_SERVICE_NAME: 'a b' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.map((p) => p.split(' ')[0]),
        ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME'],
      );
      return true;
    },
  );
});
