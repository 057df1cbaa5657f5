// POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: validated (errors name the variable),
// loopback 127.0.0.1:9464 by default, `off` disables the endpoint.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { OBSERVABILITY_ADDRESS_VARIABLE, parseObservabilityAddress } from '../../src/observability/config.ts';

describe('observability address', () => {
  test('default: 127.0.0.1:9464 (loopback only)', () => {
    assert.deepEqual(parseObservabilityAddress({}), { host: '127.0.0.1', port: 9464 });
  });

  test('explicit values and off', () => {
    assert.deepEqual(parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: '0.0.0.0:9100' }), { host: '0.0.0.0', port: 9100 });
    assert.deepEqual(parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: '[::1]:0' }), { host: '::1', port: 0 });
    assert.deepEqual(parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: 'localhost:9464' }), { host: 'localhost', port: 9464 });
    assert.equal(parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: 'off' }), null);
    assert.equal(parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: 'OFF' }), null);
  });

  for (const bad of ['', '9464', '127.0.0.1', '127.0.0.1:70000', 'http://127.0.0.1:9464', '127.0.0.1:port', 'a b:1']) {
    test(`rejects ${JSON.stringify(bad)} with an error naming the variable`, () => {
      assert.throws(
        () => parseObservabilityAddress({ [OBSERVABILITY_ADDRESS_VARIABLE]: bad }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS/);
          return true;
        },
      );
    });
  }
});
