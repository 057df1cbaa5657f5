/**
 * OpenTelemetry spans (RFC 12 names traces beside logs and metrics), through @opentelemetry/api
 * only: a no-op until the host application registers an SDK (a TracerProvider and, for nesting
 * across awaits, a context manager). Spans: a scan step, an admission page, a dispatch, the
 * worker's invocation (in the worker process, child of the dispatch: its context travels in the
 * invoke message, so a processor's own spans nest under it), the acknowledgement commit (linked
 * to the dispatches it commits for) and a durable task attempt.
 *
 * Names are fixed; attributes follow the rule of metric labels (RFC 12): family, binding, task
 * type, bounded outcomes and counts. Never a scope id, worker id, holder id, task id or payload.
 * A worker process records spans only if an SDK is registered there too (e.g. NODE_OPTIONS
 * `--import ./otel.mjs`, which worker processes inherit).
 */
import type { Attributes, Context, Link, Span, SpanContext } from '@opentelemetry/api';
import { requirePackage } from '../paths.ts';

type Api = typeof import('@opentelemetry/api');

// Where API 1.x keeps what an SDK registers (its internal/global-utils); the package is pinned to ~1.9.
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');
let loaded: Api | null = null;

/**
 * The API once something registered a global (a tracer provider, a context manager), else null:
 * until then every span would be a no-op, so nothing loads the package (about 25 ms of CPU at the
 * start of every worker process and command). Read at each call: an SDK registered later counts.
 */
function api(): Api | null {
  if (loaded) return loaded;
  if ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] === undefined) return null;
  loaded = requirePackage('@opentelemetry/api') as Api;
  return loaded;
}

export const TRACER_NAME = 'artifact-processing-supervisor';

export const SPANS = {
  scan: 'apsup.scan',
  admissionPage: 'apsup.admission_page',
  dispatch: 'apsup.dispatch',
  invocation: 'apsup.invocation',
  ackCommit: 'apsup.ack_commit',
  taskAttempt: 'apsup.task_attempt',
} as const;

export const ATTR = {
  family: 'apsup.family',
  binding: 'apsup.binding',
  taskType: 'apsup.task_type',
  outcome: 'apsup.outcome',
  count: 'apsup.count',
} as const;

/** The span context of a dispatch, carried to the worker in the invoke message. */
export interface TraceCarrier {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export function familyAttributes(family: string, binding: string): Attributes {
  return { [ATTR.family]: family, [ATTR.binding]: binding };
}

function fail(otel: Api, span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'Error' });
}

/** fn's promise; a synchronous throw becomes a rejection, as inside a span's async callback. */
function untraced<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Runs fn inside a span (active for everything fn awaits); an exception marks it failed. */
export function traced<T>(
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
  options: { parent?: Context; links?: Link[]; root?: boolean } = {},
): Promise<T> {
  const otel = api();
  if (!otel) return untraced(fn);
  const tracer = otel.trace.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, { attributes, links: options.links, root: options.root }, options.parent ?? otel.context.active(), async (span) => {
    try {
      return await fn();
    } catch (error) {
      fail(otel, span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active span's context (undefined while nothing is traced). */
function activeSpanContext(): SpanContext | undefined {
  const otel = api();
  if (!otel) return undefined;
  const sc = otel.trace.getSpanContext(otel.context.active());
  return sc && otel.trace.isSpanContextValid(sc) ? sc : undefined;
}

/** The active span's context for the invoke message (undefined while nothing is traced). */
export function traceCarrier(): { trace?: TraceCarrier } {
  const sc = activeSpanContext();
  return sc ? { trace: { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags } } : {};
}

function parentOf(otel: Api, carrier: TraceCarrier | undefined): Context {
  if (!carrier) return otel.ROOT_CONTEXT;
  const sc: SpanContext = { traceId: carrier.traceId, spanId: carrier.spanId, traceFlags: carrier.traceFlags & otel.TraceFlags.SAMPLED, isRemote: true };
  return otel.trace.isSpanContextValid(sc) ? otel.trace.setSpanContext(otel.ROOT_CONTEXT, sc) : otel.ROOT_CONTEXT;
}

/**
 * The worker's invocation span, child of the supervisor's dispatch span; the result's status
 * becomes the outcome attribute ('failed', 'term_lost', 'not_acknowledged' mark the span failed).
 */
export function tracedInvocation<T extends { status: string }>(
  message: { trace?: TraceCarrier; context: { artifactFamily: string; bindingName: string } },
  fn: () => Promise<T>,
): Promise<T> {
  const otel = api();
  if (!otel) return untraced(fn);
  const attributes = familyAttributes(message.context.artifactFamily, message.context.bindingName);
  const tracer = otel.trace.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(SPANS.invocation, { kind: otel.SpanKind.CONSUMER, attributes }, parentOf(otel, message.trace), async (span) => {
    try {
      const result = await fn();
      span.setAttribute(ATTR.outcome, result.status);
      if (['failed', 'term_lost', 'not_acknowledged'].includes(result.status)) span.setStatus({ code: otel.SpanStatusCode.ERROR, message: result.status });
      return result;
    } catch (error) {
      fail(otel, span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A link to the active span (for a batch committed later on behalf of several dispatches). */
export function activeLink(): Link | null {
  const sc = activeSpanContext();
  return sc ? { context: sc } : null;
}

const NO_SPAN = { end() {} };

/** A span the caller ends (a task attempt: from its launch to its settlement). */
export function startSpan(name: string, attributes: Attributes): { end(outcome?: string | null): void } {
  const otel = api();
  if (!otel) return NO_SPAN;
  const span = otel.trace.getTracer(TRACER_NAME).startSpan(name, { attributes });
  return {
    end(outcome) {
      if (outcome) span.setAttribute(ATTR.outcome, outcome);
      if (outcome && outcome !== 'succeeded' && outcome !== 'cancelled') span.setStatus({ code: otel.SpanStatusCode.ERROR, message: outcome });
      span.end();
    },
  };
}
