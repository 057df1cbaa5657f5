// RFC 12 traces: with an SDK registered (in-memory exporter here, a file exporter in the worker
// processes), a scan, its admission page, a dispatch, the worker's invocation (child of the
// dispatch, in another process), the processor's own span (child of the invocation), the
// acknowledgement commit (linked to the dispatch) and a durable task attempt are recorded, with
// family/binding attributes and never a scope id. Without an SDK the API is a no-op.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SPANS, traceCarrier, traced } from '../../src/observability/tracing.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { loadRecorder, nodeOptionsWith } from '../helpers/load-record.ts';
import { createFixtureTables as createProcessorTables, FIXTURES_DIR, intentOf, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';
import { createFixtureTables as createTaskTables, makeRunner, waitForTask, isTerminal, type RunnerKit } from '../tasks/harness.ts';

const TRACED_PROCESSOR = path.join(FIXTURES_DIR, 'processors', 'traced.ts');
const CHILD_SDK = path.join(FIXTURES_DIR, 'otel-child.mjs');

interface ChildSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
}

test('without an SDK every helper is a no-op: nothing is carried to a worker', async () => {
  assert.deepEqual(await traced(SPANS.dispatch, {}, async () => traceCarrier()), {});
});

/** Until every scope's first request is handled. */
function allHandled(fx: BackendFixture, family: string, scopes: string[]): Promise<unknown> {
  return waitFor(async () => {
    for (const s of scopes) if (((await intentOf(fx, family, s))?.handledGeneration ?? 0) < 1) return false;
    return true;
  }, 30_000);
}

// Loading the API costs a process about 25 ms of CPU; with nothing registered its spans are no-ops.
describe('[sqlite] without an SDK a worker process never loads the API', () => {
  let fx: BackendFixture;
  let runtime: Runtime | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-noapi-'));
  before(async () => {
    fx = await createBackend('sqlite');
    await createProcessorTables(fx);
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('invocations dispatched and acknowledged; no worker imported or required @opentelemetry/api', async () => {
    const family = 'tr-noapi';
    const recorder = loadRecorder(dir);
    runtime = await startRuntime(fx, [testFamily(family, { schedule: { kind: 'interval', seconds: 1 } })], { workerEnv: recorder.env });
    const scopes = ['noapi-a', 'noapi-b'];
    for (const s of scopes) await runtime.trigger(family, s);
    await allHandled(fx, family, scopes);
    await runtime.stop();
    runtime = null;
    recorder.assertNoneLoaded();
  });
});

describe('spans with an SDK registered', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager();
  before(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  after(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  for (const backend of BACKENDS) {
    describe(`[${backend}]`, () => {
      let fx: BackendFixture;
      let runtime: Runtime | null = null;
      let kit: RunnerKit | null = null;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-spans-'));
      const spanFile = path.join(dir, 'child-spans.jsonl');
      const family = `tr-${backend}`;
      const scopes = [`scope-${crypto.randomBytes(4).toString('hex')}-dirty`, `scope-${crypto.randomBytes(4).toString('hex')}-trigger`];

      before(async () => {
        fx = await createBackend(backend);
        exporter.reset();
      });
      after(async () => {
        await runtime?.stop();
        await kit?.runner.stop();
        await fx?.cleanup();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      test('scan -> admission page, dispatch -> invocation (worker) -> processor span, ack commit linked to the dispatch; no scope id', async () => {
        runtime = await startRuntime(fx, [testFamily(family, { processorModule: TRACED_PROCESSOR, schedule: { kind: 'interval', seconds: 1 } })], {
          workerEnv: { NODE_OPTIONS: nodeOptionsWith(CHILD_SDK), APSUP_TEST_SPAN_FILE: spanFile },
        });
        await runtime.markDirty(family, scopes[0]);
        runtime.notifyDirty(family);
        await runtime.trigger(family, scopes[1]);
        await allHandled(fx, family, scopes);
        await runtime.stop();
        runtime = null;

        const spans = exporter.getFinishedSpans();
        const named = (n: string) => spans.filter((s) => s.name === n && s.attributes['apsup.family'] === family);
        const scan = named(SPANS.scan);
        const pages = named(SPANS.admissionPage);
        const dispatches = named(SPANS.dispatch);
        const acks = spans.filter((s) => s.name === SPANS.ackCommit);
        assert.ok(scan.length >= 1 && pages.length >= 1, `scan and page spans: ${spans.map((s) => s.name).join(', ')}`);
        assert.ok(
          pages.every((p) => scan.some((s) => s.spanContext().spanId === parentOf(p))),
          'an admission page is a child of its scan',
        );
        assert.ok(dispatches.length >= 2);
        for (const s of [...scan, ...pages, ...dispatches]) assert.equal(s.attributes['apsup.binding'], `fx.${family}`);
        assert.ok(acks.length >= 1);
        const dispatchIds = new Set(dispatches.map((d) => d.spanContext().spanId));
        assert.ok(
          acks.some((a) => a.links.some((l) => dispatchIds.has(l.context.spanId))),
          'the batched ack commit links to the dispatches',
        );

        const child = fs
          .readFileSync(spanFile, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as ChildSpan);
        const invocations = child.filter((s) => s.name === SPANS.invocation);
        assert.ok(invocations.length >= 2, `worker spans: ${child.map((s) => s.name).join(', ')}`);
        for (const inv of invocations) {
          const parent = dispatches.find((d) => d.spanContext().spanId === inv.parentSpanId);
          assert.ok(parent, 'the invocation span (worker process) is a child of a dispatch span (host)');
          assert.equal(inv.traceId, parent.spanContext().traceId);
          assert.equal(inv.attributes['apsup.family'], family);
          assert.equal(inv.attributes['apsup.outcome'], 'ok');
        }
        const work = child.filter((s) => s.name === 'fixture.processor_work');
        assert.ok(
          work.length >= 2 && work.every((w) => invocations.some((i) => i.spanId === w.parentSpanId)),
          "the processor's own span nests under the invocation",
        );

        const everything = JSON.stringify([...spans.map((s) => ({ n: s.name, a: s.attributes, e: s.events })), ...child]);
        for (const scope of scopes) assert.ok(!everything.includes(scope), 'no scope id in span names or attributes');
      });

      test('a durable task attempt span, by task type, with its outcome', async () => {
        await createTaskTables(fx);
        kit = await makeRunner(fx);
        await kit.runner.start();
        const submitted = await kit.service.submit({ taskType: 'fx-sleep', payload: { ms: 10 } });
        await waitForTask(kit.tasks, submitted.taskId, isTerminal);
        await waitFor(() => exporter.getFinishedSpans().some((s) => s.name === SPANS.taskAttempt), 10_000);
        const attempt = exporter.getFinishedSpans().find((s) => s.name === SPANS.taskAttempt)!;
        assert.equal(attempt.attributes['apsup.task_type'], 'fx-sleep');
        assert.equal(attempt.attributes['apsup.outcome'], 'succeeded');
        assert.deepEqual(Object.keys(attempt.attributes).sort(), ['apsup.outcome', 'apsup.task_type'], 'no task id or payload');
        await kit.runner.stop();
        kit = null;
        exporter.reset();
      });
    });
  }
});
