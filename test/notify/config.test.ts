// POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL: off by default, validated with a message naming
// the variable, and never shown with its credentials.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { NOTIFY_REDIS_URL_VARIABLE, parseNotifyConfig } from '../../src/notify/config.ts';

const env = (v: string | undefined) => (v === undefined ? {} : { [NOTIFY_REDIS_URL_VARIABLE]: v });

test('off unless set: unset, blank and "off" mean no channel', () => {
  for (const v of [undefined, '', '  ', 'off', 'OFF']) assert.equal(parseNotifyConfig(env(v)), null, String(v));
});

test('a redis URL is accepted; the redacted form has host, port and db, never credentials', () => {
  const c = parseNotifyConfig(env('redis://user:s3cret@cache.internal:6380/2'))!;
  assert.equal(c.url, 'redis://user:s3cret@cache.internal:6380/2');
  assert.equal(c.redacted, 'redis://cache.internal:6380/2');
  assert.equal(parseNotifyConfig(env('rediss://:pw@h'))!.redacted, 'rediss://h:6379/0');
  assert.doesNotMatch(JSON.stringify(parseNotifyConfig(env('redis://:topsecret@h:1/0'))!.redacted), /topsecret/);
});

test('bad values are refused with one line naming the variable and the allowed form', () => {
  for (const v of ['localhost:6379', 'http://h:6379', 'redis://h:0', 'redis://h:70000', 'redis://h/16', 'redis://h/x', 'redis://h?tls=1', 'redis://']) {
    assert.throws(
      () => parseNotifyConfig(env(v)),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.match(e.message, new RegExp(NOTIFY_REDIS_URL_VARIABLE));
        assert.doesNotMatch(e.message, /\n/);
        return true;
      },
      v,
    );
  }
  assert.throws(
    () => parseNotifyConfig(env('ftp://user:hunter2@h')),
    (e: Error) => !/hunter2/.test(e.message),
  );
});
