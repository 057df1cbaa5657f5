/**
 * `artifact-processing-supervisor/sdk`: what a processor module and a families module import
 * (README "Hosting your own processors"). A processor runs in a worker process and reaches the
 * database only through ctx.read and ctx.commit (RFC 6).
 */
export {
  AuthorizationError,
  ConflictError,
  defineProcessor,
  type BackgroundPrincipal,
  type CommitOptions,
  type ExecutionContext,
  type Processor,
  type ProcessorContext,
  type ReadHandle,
  type Tx,
} from './processor.ts';
export type { FamilyRegistration, PendingWorkProvider, ProviderContext, SchedulePolicyDecl } from '../registry/registration.ts';
export { ReadOnlyError, TermLostError, TransactionClosedError } from '../store/errors.ts';
